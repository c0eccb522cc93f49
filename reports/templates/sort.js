// Sortable tables, offline: a click on a column header orders the rows by
// that column (again: the other way). Numeric cells carry their raw value in
// data-v; empty cells go last either way.
document.querySelectorAll("table.sortable").forEach((table) => {
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((th, col) => {
    th.querySelector("button").addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const numeric = th.dataset.numeric === "1";
      const key = (row) => {
        const cell = row.cells[col];
        const raw = cell.dataset.v;
        if (raw !== undefined && raw !== "") return parseFloat(raw);
        const text = cell.textContent.trim();
        if (!numeric) return text;
        const n = parseFloat(text.replace(/[,%\s]/g, ""));
        return Number.isNaN(n) ? text : n;
      };
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = key(a);
        const y = key(b);
        if (x === "" || y === "") return (x === "") - (y === "");
        const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return ascending ? order : -order;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
});
