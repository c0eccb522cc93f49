//! Records a fingerprint of the engine's sources as `FCA_ENGINE_BUILD`, so
//! that results from different solver builds are never mixed unnoticed
//! (`analyzer._engine.__version__` is `<crate version>+src.<hash>`): every
//! file under `src/` (code and the data compiled in), and `Cargo.toml`.

use std::path::{Path, PathBuf};

/// Every file below `dir`, recursively.
fn files_below(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source directory") {
        let path = entry.expect("a readable directory entry").path();
        if path.is_dir() {
            files_below(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let mut files = Vec::new();
    files_below(Path::new("src"), &mut files);
    files.push("Cargo.toml".into());
    files.sort();
    // A file added or removed changes the directory, not a file cargo watches.
    println!("cargo:rerun-if-changed=src");
    // FNV-1a: stable across Rust versions, unlike the std hasher. Paths
    // with `/` on every platform, so that the hash does not depend on it.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let bytes = std::fs::read(f).expect("readable source");
        let name = f.to_string_lossy().replace('\\', "/");
        for b in name.bytes().chain(bytes) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!(
        "cargo:rustc-env=FCA_ENGINE_BUILD={:012x}",
        h & 0xffff_ffff_ffff
    );
}
