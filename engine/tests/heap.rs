//! What a growing table holds resident, in a process of its own (the other
//! tests' allocations would blur it): the prover's table grows its 256
//! segments a fifth at a time, and the buffers it frees must not stay
//! resident beside it (`engine::heap`).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_grown_table_holds_little_more_than_its_bytes_resident() {
    use engine::prover::table::FpTable;
    fn resident() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        let kb: u64 = s
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kb * 1024
    }
    // A large buffer freed first, as the complete search frees its hash
    // set's old table when it doubles: glibc then raises its mmap threshold
    // to that size, and every segment below it goes on the heap.
    drop(std::hint::black_box(vec![1u8; 30 << 20]));
    let before = resident();
    let mut t = FpTable::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u128;
    // About 110 MB, in segments of at most about half a MB.
    for _ in 0..8_000_000u64 {
        x = x.wrapping_mul(0x2545_F491_4F6C_DD1D_9E37_79B9_7F4A_7C15) ^ (x >> 61);
        t.insert(x | 1).unwrap();
    }
    let held = resident() - before;
    let bytes = t.bytes();
    eprintln!("resident {held}, table {bytes}");
    assert!(
        held < bytes + bytes / 10,
        "resident {held} for a table of {bytes}"
    );
}
