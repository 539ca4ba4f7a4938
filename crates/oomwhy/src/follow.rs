//! Reads a file as it grows, like `tail -F`, for `oomwhy --follow`.
//!
//! [`Follower::poll`] returns new bytes when there are some. At the end of
//! the file it checks whether the file was truncated (its size shrank below
//! what was read: start again at 0) or rotated (the path now names another
//! file: finish the old one, then open the new one from its start). A file
//! truncated and regrown past the old size between two polls is not noticed,
//! as with `tail -f`.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// What one poll found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// This many new bytes are at the start of the buffer.
    Data(usize),
    /// The file was truncated; reading starts again at its beginning.
    Truncated,
    /// The path now names a new file (log rotation); reading starts at its beginning.
    Rotated,
    /// Nothing new: wait a little and poll again.
    Idle,
}

/// Follows one file by path.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    file: File,
    identity: Option<Identity>,
    position: u64,
}

/// What tells two files apart: device and inode on Unix, the creation
/// time elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity(u64, u64);

#[cfg(unix)]
fn identity(meta: &Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(meta: &Metadata) -> Option<Identity> {
    let created = meta.created().ok()?;
    let since = created.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(Identity(since.as_secs(), u64::from(since.subsec_nanos())))
}

impl Follower {
    /// Opens `path` to follow it from its beginning.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        Ok(Follower {
            path: path.to_path_buf(),
            identity: identity(&meta),
            file,
            position: 0,
        })
    }

    /// Skips what the file holds now (`--from-end`): only what is written
    /// from here on is read. Returns the number of bytes skipped.
    pub fn skip_to_end(&mut self) -> io::Result<u64> {
        let end = self.file.seek(SeekFrom::End(0))?;
        self.position = end;
        Ok(end)
    }

    /// Bytes read from the current file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Reads what is new into `buf`, or reports a truncation, a rotation or
    /// that nothing is new. Never blocks for long (the file is regular).
    pub fn poll(&mut self, buf: &mut [u8]) -> io::Result<Event> {
        let n = loop {
            match self.file.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n > 0 {
            self.position += n as u64;
            return Ok(Event::Data(n));
        }
        // At the end of the open file: was it replaced or cut?
        if let Ok(meta) = std::fs::metadata(&self.path) {
            let replaced = match (identity(&meta), self.identity) {
                (Some(now), Some(before)) => now != before,
                _ => false,
            };
            if replaced {
                // The old file was read to its end above; switch to the new one.
                if let Ok(file) = File::open(&self.path) {
                    let meta = file.metadata()?;
                    self.identity = identity(&meta);
                    self.file = file;
                    self.position = 0;
                    return Ok(Event::Rotated);
                }
            }
        }
        // A missing path (rotated, new file not created yet) keeps the old file.
        if self.file.metadata()?.len() < self.position {
            self.file.seek(SeekFrom::Start(0))?;
            self.position = 0;
            return Ok(Event::Truncated);
        }
        Ok(Event::Idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("oomwhy-follow-{}-{name}", std::process::id()))
    }

    fn read_all(f: &mut Follower) -> (Vec<u8>, Vec<Event>) {
        let mut buf = [0u8; 4];
        let mut data = Vec::new();
        let mut events = Vec::new();
        loop {
            match f.poll(&mut buf).unwrap() {
                Event::Data(n) => data.extend_from_slice(&buf[..n]),
                Event::Idle => return (data, events),
                other => events.push(other),
            }
        }
    }

    #[test]
    fn follows_growth_truncation_and_rotation() {
        let path = temp_path("log");
        let rotated = temp_path("log.1");
        std::fs::write(&path, b"first\n").unwrap();
        let mut f = Follower::open(&path).unwrap();
        assert_eq!(read_all(&mut f), (b"first\n".to_vec(), vec![]));

        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(b"more\n").unwrap();
        assert_eq!(read_all(&mut f), (b"more\n".to_vec(), vec![]));

        std::fs::write(&path, b"cut\n").unwrap();
        assert_eq!(
            read_all(&mut f),
            (b"cut\n".to_vec(), vec![Event::Truncated])
        );

        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(b"last words\n").unwrap();
        std::fs::rename(&path, &rotated).unwrap();
        // Rotated away, new file not there yet: keep reading the old one.
        assert_eq!(read_all(&mut f), (b"last words\n".to_vec(), vec![]));
        std::fs::write(&path, b"new file\n").unwrap();
        assert_eq!(
            read_all(&mut f),
            (b"new file\n".to_vec(), vec![Event::Rotated])
        );
        assert_eq!(f.position(), 9);

        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(&rotated);
    }

    #[test]
    fn skipping_to_the_end_reads_only_what_comes_later() {
        let path = temp_path("end");
        std::fs::write(&path, b"old crash\n").unwrap();
        let mut f = Follower::open(&path).unwrap();
        assert_eq!(f.skip_to_end().unwrap(), 10);
        assert_eq!(read_all(&mut f), (Vec::new(), vec![]));
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(b"new\n").unwrap();
        assert_eq!(read_all(&mut f), (b"new\n".to_vec(), vec![]));
        // A truncation is still noticed from there.
        std::fs::write(&path, b"x\n").unwrap();
        assert_eq!(read_all(&mut f), (b"x\n".to_vec(), vec![Event::Truncated]));
        let _ = std::fs::remove_file(&path);
    }
}
