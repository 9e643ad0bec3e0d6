//! What a transfer carries: a file's bytes, or (for memory-to-memory tests,
//! as UDT's `appclient` and iperf send) a pattern generated from the byte
//! offset, which the receiver can check byte by byte without a copy of it.

use crate::error::{invalid, TransferError};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Byte `offset` of the test pattern: the 8-byte little-endian word
/// `(offset / 8) * 0x9E37_79B9_7F4A_7C15` (the golden-ratio multiplier), so a
/// misplaced or shifted packet does not match.
pub fn pattern_byte(offset: u64) -> u8 {
    (offset / 8).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()[(offset % 8) as usize]
}

/// Fills `buf` with the pattern from `offset` on.
pub fn fill_pattern(offset: u64, buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pattern_byte(offset + i as u64);
    }
}

/// The length of content with no end (a memory test that runs for a
/// duration), as its stream declares it: the content is the test pattern,
/// checked byte by byte, and the stream ends with the sender's shutdown after
/// everything was acknowledged; it has no checksum.
pub const UNBOUNDED: u64 = u64::MAX;

/// What to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    /// This many bytes of the test pattern.
    Bytes(u64),
    /// The test pattern until the duration ends.
    Unbounded,
}

impl Source {
    /// The content to read: the file opened (its length read now), or the pattern.
    pub fn open(&self) -> Result<Content, TransferError> {
        match self {
            Source::File(path) => Content::open(path)
                .map_err(|source| TransferError::File { path: path.display().to_string(), source }),
            Source::Bytes(n) => Ok(Content::Pattern { len: *n }),
            Source::Unbounded => Ok(Content::Pattern { len: UNBOUNDED }),
        }
    }
}

/// The bytes a sender reads from, by offset (a retransmission reads them again).
pub enum Content {
    File { file: File, len: u64 },
    Pattern { len: u64 },
}

impl Content {
    /// A regular file: the sender reads it by offset, again for each retransmission, so a
    /// directory, a pipe or a device (whose length says nothing of its content) is refused.
    pub fn open(path: &Path) -> io::Result<Content> {
        let file = File::open(path)?;
        let metadata = file.metadata()?;
        if metadata.is_dir() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "is a directory, not a file to send"));
        }
        if !metadata.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is not a regular file (a pipe or a device cannot be sent: it is read again by offset)",
            ));
        }
        Ok(Content::File { file, len: metadata.len() })
    }

    pub fn len(&self) -> u64 {
        match self {
            Content::File { len, .. } | Content::Pattern { len } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the content at `offset`.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match self {
            Content::File { file, .. } => file.read_exact_at(buf, offset),
            Content::Pattern { .. } => {
                fill_pattern(offset, buf);
                Ok(())
            }
        }
    }
}

/// A sink that checks what is written against the pattern and counts the bytes that differ.
#[derive(Debug, Default)]
pub struct PatternCheck {
    pub written: u64,
    pub mismatched: u64,
}

impl Write for PatternCheck {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for (i, &b) in buf.iter().enumerate() {
            if b != pattern_byte(self.written + i as u64) {
                self.mismatched += 1;
            }
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where a receiver puts a connection's content: the output file, if any, and the
/// pattern check (which only an unbounded test consults: its content is the pattern).
#[derive(Default)]
pub struct Sink {
    file: Option<PartFile>,
    pub pattern: PatternCheck,
}

/// The output file while it is written: `FILE.part`, renamed to `FILE` by [`Sink::commit`] once
/// the content is complete and verified, and removed if the transfer ends any other way, so a
/// failed receive never leaves a file that looks like a result (nor touches an earlier `FILE`).
struct PartFile {
    writer: BufWriter<File>,
    part: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if !self.committed {
            // Nothing more can be done about a file that cannot be removed; the error said why the transfer failed.
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// Where the output file is written until the transfer is verified: `FILE.part`.
pub fn part_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

impl Sink {
    /// A sink writing to `out` (its `.part` created now, so that a bad path is reported before
    /// listening), or only checking the pattern.
    pub fn create(out: Option<&Path>) -> Result<Sink, TransferError> {
        let Some(target) = out else { return Ok(Sink::default()) };
        if target.is_dir() {
            return Err(invalid(
                "--out",
                format!("{} is a directory; give the name of the file to write", target.display()),
            ));
        }
        let part = part_path(target);
        let file = File::create(&part).map_err(|source| output_error(Some(&part), source))?;
        let writer = BufWriter::with_capacity(1 << 20, file);
        Ok(Sink {
            file: Some(PartFile { writer, part, target: target.to_path_buf(), committed: false }),
            pattern: PatternCheck::default(),
        })
    }

    /// The content is complete and verified: the output flushed and renamed from `FILE.part` to `FILE`.
    pub fn commit(&mut self) -> Result<(), TransferError> {
        let Some(f) = &mut self.file else { return Ok(()) };
        f.writer.flush().map_err(|source| output_error(Some(&f.part), source))?;
        std::fs::rename(&f.part, &f.target).map_err(|source| output_error(Some(&f.target), source))?;
        f.committed = true;
        Ok(())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(f) = &mut self.file {
            f.writer.write_all(buf)?;
        }
        self.pattern.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.writer.flush())
    }
}

/// An error reading the content to send.
pub fn read_error(source: io::Error) -> TransferError {
    TransferError::File { path: "the content".into(), source }
}

/// An error writing the content to `out` (or to the pattern check).
pub fn output_error(out: Option<&Path>, source: io::Error) -> TransferError {
    let path = out.map_or("the output".into(), |p| p.display().to_string());
    TransferError::File { path, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_a_function_of_the_offset_and_the_check_finds_a_changed_byte() {
        let mut a = vec![0u8; 100];
        fill_pattern(1000, &mut a);
        let mut b = vec![0u8; 50];
        fill_pattern(1050, &mut b);
        assert_eq!(&a[50..], &b[..]);
        assert_ne!(a[..8], a[8..16], "consecutive words differ");
        let mut whole = vec![0u8; 1100];
        fill_pattern(0, &mut whole);
        let mut check = PatternCheck::default();
        check.write_all(&whole[..600]).unwrap();
        whole[700] ^= 1;
        check.write_all(&whole[600..]).unwrap();
        assert_eq!((check.written, check.mismatched), (1100, 1));
    }

    #[test]
    fn a_file_is_read_at_any_offset() {
        let path = std::env::temp_dir().join(format!("cclab-content-{}", std::process::id()));
        std::fs::write(&path, b"0123456789").unwrap();
        let content = Content::open(&path).unwrap();
        let mut buf = [0u8; 3];
        content.read_at(4, &mut buf).unwrap();
        assert_eq!((&buf, content.len()), (b"456", 10));
        assert!(content.read_at(9, &mut buf).is_err(), "past the end");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_directory_or_a_device_is_not_content() {
        let dir = std::env::temp_dir();
        let message = |p: &Path| Content::open(p).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message(&dir).contains("is a directory"), "{}", message(&dir));
        assert!(message(Path::new("/dev/null")).contains("not a regular file"));
    }

    #[test]
    fn the_output_is_a_part_file_until_committed_and_removed_if_never_committed() {
        let dir = std::env::temp_dir().join(format!("cclab-sink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (out, part) = (dir.join("copy.bin"), dir.join("copy.bin.part"));
        std::fs::write(&out, b"an earlier result").unwrap();
        let mut failed = Sink::create(Some(&out)).unwrap();
        failed.write_all(b"half of it").unwrap();
        assert!(part.exists());
        drop(failed);
        assert!(!part.exists(), "a failed receive removes its part file");
        assert_eq!(std::fs::read(&out).unwrap(), b"an earlier result", "and leaves FILE alone");
        let mut done = Sink::create(Some(&out)).unwrap();
        done.write_all(b"all of it").unwrap();
        done.commit().unwrap();
        drop(done);
        assert_eq!(std::fs::read(&out).unwrap(), b"all of it");
        assert!(!part.exists());
        let refused = Sink::create(Some(&dir)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.starts_with("--out: ") && refused.contains("is a directory"), "{refused}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
