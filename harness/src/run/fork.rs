//! Trials in forked child processes (JMH `@Fork`), and in threads of this process (`-f 0`).
//!
//! A fork is this same executable started with [`FORK_ARG`]: it reads a [`TrialSpec`] and then
//! [`Command`]s as JSON lines on stdin and answers with [`Event`]s as JSON lines on stdout, each
//! prefixed by [`EVENT_PREFIX`] so stray output cannot be mistaken for a result. A fresh process
//! per trial resets allocator state and thread-locals, and, above all, lets the parent choose the
//! environment: the standard library reads `RUST_BACKTRACE` once per process, so only a new
//! process can switch it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use crate::run::result::{IterationResult, TrialSpec};
use crate::run::scenario::Scenario;
use crate::run::trial::{Command, Event, run_trial};

/// The hidden first argument that makes the executable act as a fork.
pub const FORK_ARG: &str = "__critsec-fork";

/// The version of what a runner and its forks say to each other (the trial spec, the commands
/// and the events, as JSON lines). Two builds fork each other's trials only when theirs agree:
/// change any of those messages and this changes (the test `the_fork_protocol_is_pinned` holds
/// their shape).
pub const FORK_PROTOCOL: u32 = 1;

/// The hidden first argument that makes the executable print its [`FORK_PROTOCOL`] and exit: a
/// build older than the version answers it with a usage error instead.
pub const FORK_PROTOCOL_ARG: &str = "__critsec-fork-protocol";

/// What the executable prints for [`FORK_PROTOCOL_ARG`], before the version.
const PROTOCOL_LINE: &str = "critsec fork protocol ";

/// Runs this process as what its first argument makes it, if that is a fork ([`FORK_ARG`]: the
/// trial of `catalog`) or a protocol probe ([`FORK_PROTOCOL_ARG`]); the exit code. `None` for
/// any other process, which goes on to parse its command line.
pub fn as_fork(catalog: impl FnOnce() -> Catalog) -> Option<i32> {
    match std::env::args().nth(1).as_deref() {
        Some(FORK_ARG) => Some(fork_child_main(&catalog())),
        Some(FORK_PROTOCOL_ARG) => {
            println!("{PROTOCOL_LINE}{FORK_PROTOCOL}");
            Some(0)
        }
        _ => None,
    }
}

/// The fork protocol `exe` speaks, or `None` when it does not say (a build older than
/// [`FORK_PROTOCOL`], or no critsec at all).
pub fn fork_protocol_of(exe: &std::path::Path) -> Option<u32> {
    let out = std::process::Command::new(exe)
        .arg(FORK_PROTOCOL_ARG)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .strip_prefix(PROTOCOL_LINE)?
        .parse()
        .ok()
}
/// Prefix of every protocol line a fork writes to stdout.
pub const EVENT_PREFIX: &str = "@@critsec ";

/// The scenarios an executable knows, looked up by name in forks and runs alike.
pub struct Catalog {
    scenarios: Vec<Box<dyn Scenario>>,
}

impl Catalog {
    /// A catalog of `scenarios`.
    pub fn new(scenarios: Vec<Box<dyn Scenario>>) -> Self {
        Catalog { scenarios }
    }

    /// Every scenario, in declaration order.
    pub fn scenarios(&self) -> &[Box<dyn Scenario>] {
        &self.scenarios
    }

    /// The scenario named `name`.
    pub fn find(&self, name: &str) -> Option<&dyn Scenario> {
        self.scenarios
            .iter()
            .find(|s| s.name() == name)
            .map(|s| &**s)
    }
}

static IN_FORK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process is a fork ([`fork_child_main`] runs it), not the process the user ran.
pub fn in_fork() -> bool {
    IN_FORK.load(std::sync::atomic::Ordering::Relaxed)
}

/// Entry point of a fork ([`as_fork`] calls it when the first argument is [`FORK_ARG`]).
/// Returns the process exit code.
fn fork_child_main(catalog: &Catalog) -> i32 {
    IN_FORK.store(true, std::sync::atomic::Ordering::Relaxed);
    // A panic on any thread (a worker's, the trial's) ends the fork at once, after the default
    // hook printed it to stderr: the other threads would otherwise wait for the panicked one
    // forever, and the parent would learn of it only at its timeout. The parent is told why
    // first, so that its error row names the panic, not only the exit status.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        let error = format!(
            "thread `{}` of the fork panicked{}: {}",
            std::thread::current().name().unwrap_or("unnamed"),
            info.location()
                .map(|l| format!(" at {l}"))
                .unwrap_or_default(),
            crate::run::control::panic_message(info.payload()),
        );
        emit(&Event::Failed { error });
        std::process::exit(101);
    }));
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let spec: TrialSpec = match lines.next().map(|l| l.map(|l| serde_json::from_str(&l))) {
        Some(Ok(Ok(spec))) => spec,
        other => {
            emit(&Event::Failed {
                error: format!("fork: expected a trial spec on stdin, got {other:?}"),
            });
            return 2;
        }
    };
    let Some(scenario) = catalog.find(&spec.scenario) else {
        emit(&Event::Failed {
            error: format!("fork: unknown scenario `{}`", spec.scenario),
        });
        return 2;
    };
    let mut ok = true;
    run_trial(scenario, &spec, &mut |event| {
        let terminal = matches!(event, Event::Finished { .. } | Event::Failed { .. });
        ok &= !matches!(event, Event::Failed { .. });
        if !emit(&event) || terminal {
            return Command::Finish;
        }
        // A closed or garbled stdin means the parent is gone or confused: finish cleanly.
        match lines.next() {
            Some(Ok(l)) => serde_json::from_str(&l).unwrap_or(Command::Finish),
            _ => Command::Finish,
        }
    });
    if ok { 0 } else { 1 }
}

/// Writes `e` to the parent as one line of the fork's stdout; false if the parent is gone.
fn emit(e: &Event) -> bool {
    let line = serde_json::to_string(e).expect("events serialise");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{EVENT_PREFIX}{line}")
        .and_then(|_| stdout.flush())
        .is_ok()
}

/// A running trial, in this process or in a fork, that the runner drives one iteration at a time.
pub enum TrialHandle {
    /// A trial on a thread of this process.
    InProcess {
        /// Commands to the trial thread.
        commands: mpsc::Sender<Command>,
        /// Events from the trial thread.
        events: mpsc::Receiver<Event>,
        /// The trial thread.
        thread: Option<std::thread::JoinHandle<()>>,
        /// How long to wait for an event beyond an iteration's own length ([`DEFAULT_TIMEOUT`]).
        timeout: Duration,
    },
    /// A trial in a child process.
    Forked {
        /// The child.
        child: Child,
        /// Its stdin, where commands go.
        stdin: ChildStdin,
        /// Its stdout's lines, read by a thread of their own so that a wait can time out;
        /// disconnected at the fork's end of file.
        lines: mpsc::Receiver<String>,
        /// How long to wait for an event beyond an iteration's own length ([`DEFAULT_TIMEOUT`]).
        timeout: Duration,
    },
}

/// Why a trial could not be started or driven. Each variant says what happened; a trial's own
/// failure (setup, a failed check) carries the trial's message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrialError {
    /// The trial failed: its setup, verification or a worker's check.
    #[error("{0}")]
    Failed(String),
    /// The trial thread or fork process could not be started.
    #[error("{what}: {message}")]
    Start {
        /// What was being started (`spawning the trial thread`, `starting fork PATH`).
        what: String,
        /// The operating system's reason.
        message: String,
    },
    /// The trial thread stopped, or the fork stopped reading its commands.
    #[error("{0}")]
    Stopped(String),
    /// The fork exited before it reported a result.
    #[error("the fork exited ({status}) without a result; its stderr is above")]
    ForkExited {
        /// The exit status, as the OS reports it.
        status: String,
    },
    /// The fork wrote something that is not a trial event.
    #[error("garbled fork event: {0}")]
    Garbled(String),
    /// The trial answered out of protocol.
    #[error("expected {expected}, got {got}")]
    Protocol {
        /// What the parent waited for.
        expected: &'static str,
        /// What came instead.
        got: String,
    },
    /// The run was interrupted (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// A trial in this process gave no event within the timeout. Its threads cannot be
    /// stopped, so the run that started it ends here (see [`TrialError::ends_the_run`]).
    #[error(
        "the in-process trial gave no result within {waited} (the per-iteration timeout, --timeout); its threads cannot be stopped, so the run ends here (forks, -f 1 or more, are killed instead and the run goes on)"
    )]
    InProcessTimedOut {
        /// How long the runner waited, as `format_duration` prints it.
        waited: String,
    },
    /// The fork gave no event within the timeout (JMH's `-to`); it was killed.
    #[error(
        "the fork gave no result within {waited} (the per-iteration timeout, --timeout) and was killed"
    )]
    TimedOut {
        /// How long the parent waited, as `format_duration` prints it.
        waited: String,
    },
}

impl TrialError {
    /// Whether nothing more should run in this process: a hung in-process trial keeps its
    /// threads (spinning, holding locks) and would distort every later measurement.
    pub fn ends_the_run(&self) -> bool {
        matches!(self, TrialError::InProcessTimedOut { .. })
    }
}

/// How long a fork may take beyond an iteration's length to answer: JMH's default `-to`, 10
/// minutes, long enough for any setup here (index builds included).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

impl TrialHandle {
    /// Starts a trial in this process without waiting for its setup: call [`Self::ready`].
    pub fn spawn_in_process(
        catalog: Arc<Catalog>,
        spec: &TrialSpec,
    ) -> Result<TrialHandle, TrialError> {
        let (cmd_tx, cmd_rx) = mpsc::channel::<Command>();
        let (ev_tx, ev_rx) = mpsc::channel::<Event>();
        let spec = spec.clone();
        let thread = std::thread::Builder::new()
            .name("critsec-trial".into())
            .spawn(move || {
                let Some(scenario) = catalog.find(&spec.scenario) else {
                    let _ = ev_tx.send(Event::Failed {
                        error: format!("unknown scenario `{}`", spec.scenario),
                    });
                    return;
                };
                run_trial(scenario, &spec, &mut |event| {
                    let terminal = matches!(event, Event::Finished { .. } | Event::Failed { .. });
                    if ev_tx.send(event).is_err() || terminal {
                        return Command::Finish;
                    }
                    cmd_rx.recv().unwrap_or(Command::Finish)
                });
            })
            .map_err(|e| TrialError::Start {
                what: "spawning the trial thread".into(),
                message: e.to_string(),
            })?;
        Ok(TrialHandle::InProcess {
            commands: cmd_tx,
            events: ev_rx,
            thread: Some(thread),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// Starts a trial in a child process of `exe` without waiting for its setup, so that
    /// several forks set up at once: call [`Self::ready`].
    pub fn spawn_forked(
        exe: &std::path::Path,
        spec: &TrialSpec,
    ) -> Result<TrialHandle, TrialError> {
        let mut cmd = std::process::Command::new(exe);
        cmd.arg(FORK_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| TrialError::Start {
            what: format!("starting fork {}", exe.display()),
            message: e.to_string(),
        })?;
        let no_pipe = |pipe: &str| TrialError::Start {
            what: format!("starting fork {}", exe.display()),
            message: format!("the fork has no {pipe}"),
        };
        let stdin = child.stdin.take().ok_or_else(|| no_pipe("stdin"))?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| no_pipe("stdout"))?);
        let (line_tx, lines) = mpsc::channel();
        std::thread::Builder::new()
            .name("critsec-fork-reader".into())
            .spawn(move || {
                let mut line = String::new();
                // Ends at the fork's end of file, a read error, or when the handle is gone.
                while matches!(stdout.read_line(&mut line), Ok(n) if n > 0) {
                    if line_tx.send(std::mem::take(&mut line)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| TrialError::Start {
                what: "spawning the fork's reader thread".into(),
                message: e.to_string(),
            })?;
        let mut handle = TrialHandle::Forked {
            child,
            stdin,
            lines,
            timeout: DEFAULT_TIMEOUT,
        };
        let spec = serde_json::to_string(spec).expect("a trial spec always serialises");
        handle.send(&spec)?;
        Ok(handle)
    }

    /// Pins a fork's threads to `cpu` ([`pin_process`](super::affinity::pin_process)), and
    /// says whether it did: a trial in this process shares the runner's threads and is left
    /// where it is.
    pub fn pin_to(&self, cpu: usize) -> Result<bool, TrialError> {
        match self {
            TrialHandle::Forked { child, .. } => super::affinity::pin_process(child.id(), cpu)
                .map(|()| true)
                .map_err(|e| TrialError::Start {
                    what: format!("pinning fork {} to CPU {cpu}", child.id()),
                    message: format!("{e} (reproduce --no-pin leaves forks unpinned)"),
                }),
            TrialHandle::InProcess { .. } => Ok(false),
        }
    }

    /// Sets how long the trial may take beyond an iteration's length to answer: a fork is then
    /// killed; an in-process trial cannot be, and ends the run ([`TrialError::ends_the_run`]).
    pub fn set_timeout(&mut self, t: Duration) {
        match self {
            TrialHandle::Forked { timeout, .. } | TrialHandle::InProcess { timeout, .. } => {
                *timeout = t
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), TrialError> {
        match self {
            TrialHandle::Forked { stdin, .. } => writeln!(stdin, "{line}")
                .and_then(|_| stdin.flush())
                .map_err(|e| TrialError::Stopped(format!("fork stopped listening: {e}"))),
            TrialHandle::InProcess { .. } => {
                unreachable!("in-process trials take commands, not lines")
            }
        }
    }

    fn command(&mut self, c: Command) -> Result<(), TrialError> {
        match self {
            TrialHandle::InProcess { commands, .. } => commands
                .send(c)
                .map_err(|_| TrialError::Stopped("the trial thread stopped".into())),
            TrialHandle::Forked { .. } => {
                let line = serde_json::to_string(&c).expect("a command always serialises");
                self.send(&line)
            }
        }
    }

    /// The next event, waiting at most `work` plus the timeout for a fork.
    fn event(&mut self, work: Duration) -> Result<Event, TrialError> {
        match self {
            TrialHandle::InProcess {
                events,
                thread,
                timeout,
                ..
            } => {
                let limit = work.saturating_add(*timeout);
                events.recv_timeout(limit).map_err(|e| match e {
                    mpsc::RecvTimeoutError::Timeout => TrialError::InProcessTimedOut {
                        waited: crate::run::settings::format_duration(limit),
                    },
                    // The thread ended without a terminal event: it panicked (setup, a check,
                    // a scenario's own code). Its message was printed by the panic hook too.
                    mpsc::RecvTimeoutError::Disconnected => {
                        let panic = thread.take().and_then(|t| t.join().err());
                        TrialError::Stopped(match panic {
                            Some(p) => format!(
                                "the trial thread panicked: {}",
                                crate::run::control::panic_message(&*p)
                            ),
                            None => "the trial thread stopped without a result".into(),
                        })
                    }
                })
            }
            TrialHandle::Forked {
                lines,
                child,
                timeout,
                ..
            } => {
                let limit = work.saturating_add(*timeout);
                let deadline = std::time::Instant::now().checked_add(limit);
                loop {
                    let left = deadline.map_or(limit, |d| {
                        d.saturating_duration_since(std::time::Instant::now())
                    });
                    let line = match lines.recv_timeout(left) {
                        Ok(line) => line,
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            let _ = child.kill();
                            let _ = child.wait();
                            return Err(TrialError::TimedOut {
                                waited: crate::run::settings::format_duration(limit),
                            });
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            // The fork closed its stdout: it ended, or it can no longer report
                            // (then it is killed, not waited for).
                            if let Ok(None) = child.try_wait() {
                                std::thread::sleep(Duration::from_millis(100));
                                if let Ok(None) = child.try_wait() {
                                    let _ = child.kill();
                                    let status =
                                        child.wait().map(|s| s.to_string()).unwrap_or_default();
                                    return Err(TrialError::Stopped(format!(
                                        "the fork closed its output pipe without a result and was killed ({status})"
                                    )));
                                }
                            }
                            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                            return Err(TrialError::ForkExited { status });
                        }
                    };
                    if let Some(json) = line.trim_end().strip_prefix(EVENT_PREFIX) {
                        return serde_json::from_str(json)
                            .map_err(|e| TrialError::Garbled(e.to_string()));
                    }
                }
            }
        }
    }

    /// Waits until the trial is set up and verified; returns its check value.
    pub fn ready(&mut self) -> Result<String, TrialError> {
        match self.event(Duration::ZERO)? {
            Event::Ready { verified } => Ok(verified),
            Event::Failed { error } => Err(TrialError::Failed(error)),
            other => Err(TrialError::Protocol {
                expected: "the trial to be ready",
                got: format!("{other:?}"),
            }),
        }
    }

    /// Runs one iteration.
    pub fn iteration(
        &mut self,
        warmup: bool,
        duration: Duration,
    ) -> Result<IterationResult, TrialError> {
        self.command(Command::Iteration {
            warmup,
            duration_ns: duration.as_nanos() as u64,
        })?;
        match self.event(duration)? {
            Event::Iteration(r) => Ok(r),
            Event::Failed { error } => Err(TrialError::Failed(error)),
            other => Err(TrialError::Protocol {
                expected: "an iteration result",
                got: format!("{other:?}"),
            }),
        }
    }

    /// Verifies the final state and ends the trial; returns the final check value.
    pub fn finish(mut self) -> Result<String, TrialError> {
        self.command(Command::Finish)?;
        let result = match self.event(Duration::ZERO)? {
            Event::Finished { verified } => Ok(verified),
            Event::Failed { error } => Err(TrialError::Failed(error)),
            other => Err(TrialError::Protocol {
                expected: "the trial to finish",
                got: format!("{other:?}"),
            }),
        };
        match &mut self {
            TrialHandle::InProcess { thread, .. } => {
                if let Some(t) = thread.take() {
                    let _ = t.join();
                }
            }
            TrialHandle::Forked { child, .. } => {
                let _ = child.wait();
            }
        }
        result
    }
}

impl Drop for TrialHandle {
    fn drop(&mut self) {
        // An abandoned fork (error or interrupt) must not outlive the run.
        if let TrialHandle::Forked { child, .. } = self
            && let Ok(None) = child.try_wait()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages of the fork protocol, as a fork of this build reads and writes them. A change
    /// here is a change of [`FORK_PROTOCOL`]: bump it, and update what this test expects.
    #[test]
    fn the_fork_protocol_is_pinned() {
        let spec = r#"{"scenario":"harness/empty","params":{"k":"v"},"threads":2,"groups":[{"name":"op","threads":2}],"mode":"Throughput","env":[["RUST_BACKTRACE","0"]]}"#;
        let commands = [
            r#"{"Iteration":{"warmup":true,"duration_ns":50000000}}"#,
            r#""Finish""#,
        ];
        let events = [
            r#"{"Ready":{"verified":"c"}}"#,
            r#"{"Iteration":{"score":1.5,"unit":"ops/s","window_ns":10,"ops":3,"thread_ops":[["op",3]],"secondary":[{"name":"m","value":2.0,"unit":"u","better":"lower"}],"histogram":null}}"#,
            r#"{"Finished":{"verified":"c"}}"#,
            r#"{"Failed":{"error":"e"}}"#,
        ];
        let round_trip = |text: &str, value: serde_json::Result<String>| {
            assert_eq!(value.unwrap(), text, "the fork protocol's messages changed");
        };
        let s: TrialSpec = serde_json::from_str(spec).unwrap();
        round_trip(spec, serde_json::to_string(&s));
        for c in commands {
            let command: Command = serde_json::from_str(c).unwrap();
            round_trip(c, serde_json::to_string(&command));
        }
        for e in events {
            let event: Event = serde_json::from_str(e).unwrap();
            round_trip(e, serde_json::to_string(&event));
        }
        assert_eq!(FORK_PROTOCOL, 1, "the version these messages are");
    }
}
