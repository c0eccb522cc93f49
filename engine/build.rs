//! Records a fingerprint of the engine's sources as `FCA_ENGINE_BUILD`, so
//! that results from different solver builds are never mixed unnoticed
//! (`analyzer._engine.__version__` is `<crate version>+src.<hash>`).

fn main() {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir("src")
        .expect("engine/src")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.push("Cargo.toml".into());
    files.sort();
    // FNV-1a: stable across Rust versions, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let bytes = std::fs::read(f).expect("readable source");
        for b in f.to_string_lossy().bytes().chain(bytes) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!(
        "cargo:rustc-env=FCA_ENGINE_BUILD={:012x}",
        h & 0xffff_ffff_ffff
    );
}
