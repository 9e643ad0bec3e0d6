//! Computes the build identity of the simulator: a content hash of every source
//! file that can change its behaviour. Sweep caches key runs on it, so a
//! rebuilt simulator never reuses runs of an older one. The git revision is
//! recorded for people, but never decides: an sdist build has no .git, and a
//! dirty tree has the same revision as a clean one.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// FNV-1a with 128-bit state: no dependency, and wide enough that an accidental
/// collision between two source trees is not a concern (it only has to detect
/// change, not resist an adversary).
struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    fn new() -> Self {
        Fnv128(Self::OFFSET)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u128::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// Length-prefixed, so that no two different (path, content) sequences
    /// produce the same byte stream.
    fn write_field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }
}

fn is_source(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "Cargo.toml" || name.ends_with(".rs")
}

/// Every source file under `dir`, skipping hidden entries (editor lock files such
/// as `.#lib.rs` would otherwise make the identity depend on an open editor).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else if is_source(&path) {
            out.push(path);
        }
    }
}

/// The path as hashed: relative to the workspace root, `/`-separated on every
/// platform, so the identity is the same wherever the tree is unpacked.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).expect("source files lie under the workspace root");
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

fn is_workspace_root(dir: &Path) -> bool {
    fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|text| text.contains("[workspace]"))
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8(output.stdout).ok()?.trim().to_string())
}

/// The git revision and whether the hashed sources differ from it; `None` when
/// the workspace is not the top of its own git checkout (an unpacked sdist may
/// sit inside some unrelated repository).
fn git_state(root: &Path) -> Option<(String, bool)> {
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    if fs::canonicalize(top).ok()? != fs::canonicalize(root).ok()? {
        return None;
    }
    let revision = git(root, &["rev-parse", "HEAD"])?;
    let status = git(
        root,
        &["status", "--porcelain", "--untracked-files=all", "--", "crates", "Cargo.toml", "Cargo.lock"],
    )?;
    // A commit changes the revision without touching a source file; watch HEAD
    // and its reflog so that the recorded revision follows it.
    for name in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(root, &["rev-parse", "--git-path", name]) {
            let p = root.join(p);
            if p.is_file() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    Some((revision, !status.is_empty()))
}

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir
        .ancestors()
        .nth(2)
        .filter(|dir| is_workspace_root(dir))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| {
            // Built outside its workspace (e.g. a packaged crate): the crate's own
            // sources are all there is to hash.
            println!("cargo:warning=cclab-py: workspace root not found; build id covers this crate only");
            manifest_dir.clone()
        });

    let mut files = Vec::new();
    let crates = root.join("crates");
    if crates.is_dir() {
        walk(&crates, &mut files);
        // The real-network crate drives sockets and never runs in a simulation:
        // working on it must not make every cached run look stale.
        let real_network = crates.join("cclab-net");
        files.retain(|p| !p.starts_with(&real_network));
        println!("cargo:rerun-if-changed={}", crates.display());
    } else {
        walk(&root.join("src"), &mut files);
        println!("cargo:rerun-if-changed={}", root.join("src").display());
    }
    for name in ["Cargo.toml", "Cargo.lock"] {
        let path = root.join(name);
        if path.is_file() && !files.contains(&path) {
            files.push(path);
        }
    }
    let mut files: Vec<(String, PathBuf)> = files.into_iter().map(|p| (relative(&root, &p), p)).collect();
    files.sort();

    let mut hash = Fnv128::new();
    for (rel, path) in &files {
        let content = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        hash.write_field(rel.as_bytes());
        hash.write_field(&content);
        println!("cargo:rerun-if-changed={}", path.display());
    }

    let (revision, dirty) = match git_state(&root) {
        Some((revision, dirty)) => (revision, if dirty { "true" } else { "false" }),
        None => (String::new(), ""),
    };
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default();

    println!("cargo:rustc-env=CCLAB_BUILD_ID={:032x}", hash.0);
    println!("cargo:rustc-env=CCLAB_BUILD_FILES={}", files.len());
    println!("cargo:rustc-env=CCLAB_GIT_REVISION={revision}");
    println!("cargo:rustc-env=CCLAB_GIT_DIRTY={dirty}");
    println!("cargo:rustc-env=CCLAB_PROFILE={}", env::var("PROFILE").unwrap_or_default());
    println!("cargo:rustc-env=CCLAB_RUSTC={rustc_version}");
}
