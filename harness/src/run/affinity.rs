//! CPU affinity of a trial's fork: which CPUs this process may use, and pinning every thread of
//! a child to one of them.
//!
//! On a small shared machine a single-threaded benchmark that the scheduler moves between CPUs
//! pays for it in cold caches, and the moves come and go with the neighbours' load: pinning a
//! single-threaded parse fork to one CPU halved its iteration CV here (METHODOLOGY.md, *CPU
//! affinity*). The parent pins a fork after its setup, so setup runs where the scheduler puts it
//! and only the measured iterations are pinned.

use std::io;

/// The CPUs this process may run on, in increasing order (empty where the platform has no
/// affinity).
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getaffinity writes at most `size_of::<cpu_set_t>()` bytes into the zeroed
        // set we own; pid 0 is this thread.
        let set = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            set
        };
        // SAFETY: CPU_ISSET only reads the set, at indices below CPU_SETSIZE.
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Pins every thread of process `pid` to `cpu`: threads it starts later inherit the affinity of
/// the thread that starts them. Linux only (elsewhere an `Unsupported` error).
pub fn pin_process(pid: u32, cpu: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let set = one_cpu(cpu)?;
        // sched_setaffinity acts on one thread (a task id), so every task of the process is
        // pinned in turn.
        for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
            let Some(tid) = task?
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            // SAFETY: the set is a valid cpu_set_t of the size passed.
            let rc = unsafe {
                libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set)
            };
            if rc != 0 {
                let e = io::Error::last_os_error();
                // A thread that ended since the listing has nothing left to pin.
                if e.raw_os_error() != Some(libc::ESRCH) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, cpu);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "CPU affinity is only set on Linux",
        ))
    }
}

/// Pins the calling thread to `cpu`. Linux only (elsewhere an `Unsupported` error).
pub fn pin_this_thread(cpu: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let set = one_cpu(cpu)?;
        // SAFETY: the set is a valid cpu_set_t of the size passed; tid 0 is the calling thread.
        if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "CPU affinity is only set on Linux",
        ))
    }
}

/// The affinity mask of `cpu` alone.
#[cfg(target_os = "linux")]
fn one_cpu(cpu: usize) -> io::Result<libc::cpu_set_t> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the affinity mask"),
        ));
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes one bit below CPU_SETSIZE.
    Ok(unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_child_pinned_to_one_cpu_reports_only_that_cpu() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let cpu = *cpus.last().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep starts");
        pin_process(child.id(), cpu).expect("pinned");
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("the status lists the allowed CPUs")
            .trim()
            .to_string();
        assert_eq!(allowed, cpu.to_string());
    }

    #[test]
    fn a_cpu_beyond_the_mask_is_refused() {
        let e = pin_process(std::process::id(), libc::CPU_SETSIZE as usize).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
