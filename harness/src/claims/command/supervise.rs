//! One invocation of a side's program, supervised: its own process group, both output pipes
//! drained on threads of their own into bounded tails (and, for a side that prints its values,
//! line by line into a reader), a time limit and interrupts that kill the whole group, and what
//! the program left running once it exited, killed and named.
//!
//! Output is read as bytes: a program may print anything, and one byte that is not UTF-8 must
//! not lose the rest (each line and each tail is decoded lossily). What is kept of it is
//! bounded, whatever the program prints.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::run::runner::interrupted;

/// What receives each line of a program's standard output (without its line end).
pub(crate) trait LineSink: Send + 'static {
    /// One line, at most [`MAX_LINE`] bytes of it.
    fn line(&mut self, line: &[u8]);
}

/// A sink that reads nothing: the output is only kept as a tail.
impl LineSink for () {
    fn line(&mut self, _: &[u8]) {}
}

/// The bytes kept of each output's end, for error messages.
const TAIL_BYTES: usize = 16 * 1024;

/// The bytes of one line a sink sees: a value line is never this long, and a longer one is not
/// worth keeping whole.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// How often a waiting invocation looks at its program, the clock and for an interrupt.
const POLL: Duration = Duration::from_millis(10);

/// How long a killed program's processes may take to be reaped (by their parents, or by init
/// for orphans, which may be slow to) before the supervisor stops waiting for them.
const REAP_GRACE: Duration = Duration::from_secs(10);

/// A program that ran to its end.
pub(crate) struct Finished<S> {
    /// How it exited.
    pub status: ExitStatus,
    /// The end of its standard output, decoded lossily.
    pub stdout_tail: String,
    /// The end of its standard error, decoded lossily.
    pub stderr_tail: String,
    /// What read its standard output line by line.
    pub sink: S,
    /// The processes it left running after it exited, killed, in words.
    pub left_behind: Option<String>,
}

/// Why a program was stopped before its end: what happened, and what was killed, in words.
pub(crate) struct Stopped(pub String);

/// Runs `cmd` (stdin from nothing, both outputs piped) in a process group of its own until it
/// has exited and both its outputs have closed (a process it started may hold them), feeding
/// each line of its standard output to `sink`. At `timeout` (none when the clock cannot count
/// that far), at an interrupt or when it cannot be waited for, the whole group is killed.
pub(crate) fn run<S: LineSink>(
    cmd: Command,
    timeout: Duration,
    sink: S,
) -> Result<Finished<S>, SpawnOrStop> {
    run_with(cmd, timeout, sink, ())
}

/// [`run`], feeding each line of its standard error to `err_sink` as well (a build's progress).
pub(crate) fn run_with<S: LineSink, E: LineSink>(
    mut cmd: Command,
    timeout: Duration,
    sink: S,
    err_sink: E,
) -> Result<Finished<S>, SpawnOrStop> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(SpawnOrStop::Spawn)?;
    let started = Instant::now();
    let deadline = started.checked_add(timeout);
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || drain(stdout, sink));
    let err = std::thread::spawn(move || drain(stderr, err_sink));
    let stop = |child: &mut Child, why: String| {
        SpawnOrStop::Stopped(Stopped(format!("{why}: {}", kill_group(child, started))))
    };
    loop {
        if out.is_finished() && err.is_finished() {
            match exited(&child) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(stop(&mut child, format!("could not be waited for ({e})"))),
            }
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            let why = format!("ran past its time limit of {} s", timeout.as_secs());
            return Err(stop(&mut child, why));
        }
        if interrupted() {
            return Err(stop(&mut child, "was interrupted".into()));
        }
        std::thread::sleep(left.map_or(POLL, |left| left.min(POLL)));
    }
    // The program has exited but is not reaped: its group id cannot name another group yet,
    // so whatever still runs in the group is what it left behind.
    let left_behind = kill_left_behind(&child);
    let status = child
        .wait()
        .map_err(|e| SpawnOrStop::Stopped(Stopped(format!("could not be reaped ({e})"))))?;
    let (stdout_tail, sink) = joined(out);
    let (stderr_tail, _) = joined(err);
    Ok(Finished {
        status,
        stdout_tail,
        stderr_tail,
        sink,
        left_behind,
    })
}

/// Why [`run`] gave no [`Finished`].
pub(crate) enum SpawnOrStop {
    /// The program could not start.
    Spawn(std::io::Error),
    /// It was stopped before its end.
    Stopped(Stopped),
}

fn joined<S>(reader: JoinHandle<(String, S)>) -> (String, S) {
    reader.join().expect("an output reader does not panic")
}

/// Reads `pipe` to its end: its last [`TAIL_BYTES`] kept, decoded lossily, and each line (at
/// most [`MAX_LINE`] bytes of it) given to `sink`.
fn drain<S: LineSink>(mut pipe: impl Read, mut sink: S) -> (String, S) {
    let mut tail: Vec<u8> = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let bytes = &buf[..n];
        tail.extend_from_slice(bytes);
        if tail.len() > 2 * TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(text) => (text, true),
                None => (piece, false),
            };
            let room = MAX_LINE.saturating_sub(line.len());
            line.extend_from_slice(&text[..text.len().min(room)]);
            if ends {
                sink.line(line.strip_suffix(b"\r").unwrap_or(&line));
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        sink.line(&line);
    }
    let start = tail.len().saturating_sub(TAIL_BYTES);
    (String::from_utf8_lossy(&tail[start..]).into_owned(), sink)
}

/// Whether `child` has exited, without reaping it (its zombie keeps its process group's id).
fn exited(child: &Child) -> std::io::Result<bool> {
    // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t we own; WNOWAIT leaves the
    // child waitable, so `Child::wait` still reaps it.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, child.id(), &mut info, flags) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(info.si_pid() != 0)
    }
}

/// The live processes of process group `pgid` but `except`, as `pid (name)`: what `/proc` lists.
fn group_members(pgid: u32, except: u32) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == except {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (name) state ppid pgrp ...`; the name may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let mut fields = stat[close + 1..].split_whitespace();
        let (state, pgrp) = (fields.next(), fields.nth(1));
        if pgrp.and_then(|g| g.parse::<u32>().ok()) == Some(pgid) && state != Some("Z") {
            members.push(format!("{pid} ({})", &stat[open + 1..close]));
        }
    }
    members.sort();
    members
}

/// Kills what an exited, unreaped `child` left running in its process group, and says what.
fn kill_left_behind(child: &Child) -> Option<String> {
    let pgid = child.id();
    let members = group_members(pgid, pgid);
    if members.is_empty() {
        return None;
    }
    // SAFETY: killpg(2) takes plain integers. The group is the child's own
    // (`process_group(0)`), and its unreaped zombie keeps the id from naming another group.
    unsafe {
        libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
    }
    let waited = Instant::now();
    while !group_members(pgid, pgid).is_empty() && waited.elapsed() < REAP_GRACE {
        std::thread::sleep(POLL);
    }
    Some(format!(
        "left {} process(es) running after it exited, killed with its process group {pgid}: {}",
        members.len(),
        members.join(", ")
    ))
}

/// Kills `child`'s process group: every process it started and did not move to a group of its
/// own. Reaps `child`, then waits (up to [`REAP_GRACE`]) until the group is gone, so that when
/// the invocation returns, nothing of the program runs. What was killed, in words.
fn kill_group(child: &mut Child, started: Instant) -> String {
    let pid = child.id();
    let pgid = pid as libc::pid_t;
    // SAFETY: killpg(2) takes plain integers. The group is the child's own (`process_group(0)`)
    // and the child is not reaped yet, so its id cannot have been reused by another group.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    let _ = child.wait();
    let after = started.elapsed().as_secs_f64();
    let reaped = Instant::now();
    // SAFETY: signal 0 sends nothing; it asks whether any process of the group exists.
    while unsafe { libc::kill(-pgid, 0) } == 0 {
        if reaped.elapsed() >= REAP_GRACE {
            return format!(
                "killed its process group {pgid} (pid {pid} and the processes it started) after {after:.1} s; some of them were not reaped within {} s",
                REAP_GRACE.as_secs()
            );
        }
        std::thread::sleep(POLL);
    }
    format!(
        "killed its process group {pgid} (pid {pid} and the processes it started) after {after:.1} s"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects every line it is given.
    #[derive(Default)]
    struct Lines(Vec<Vec<u8>>);
    impl LineSink for Lines {
        fn line(&mut self, line: &[u8]) {
            self.0.push(line.to_vec());
        }
    }

    #[test]
    fn lines_split_across_reads_arrive_whole_and_long_ones_are_cut() {
        // A reader that returns one byte at a time splits every line across reads.
        struct Trickle(std::vec::IntoIter<u8>);
        impl Read for Trickle {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                Ok(self.0.next().map(|b| buf[0] = b).map_or(0, |()| 1))
            }
        }
        let (tail, lines) = drain(
            Trickle(b"1.5\r\n\xff2\nend".to_vec().into_iter()),
            Lines::default(),
        );
        assert_eq!(
            lines.0,
            [b"1.5".to_vec(), b"\xff2".to_vec(), b"end".to_vec()]
        );
        assert_eq!(tail, "1.5\r\n\u{fffd}2\nend");
        let long = vec![b'#'; 3 * MAX_LINE];
        let (tail, lines) = drain(&long[..], Lines::default());
        assert_eq!(lines.0.len(), 1);
        assert_eq!(lines.0[0].len(), MAX_LINE);
        assert_eq!(tail.len(), TAIL_BYTES);
    }
}
