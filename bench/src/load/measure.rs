//! What the load measures: each client's tally of answers and latencies,
//! their percentiles, and the machine's CPU shares meanwhile.

use std::collections::{BTreeMap, HashMap};

/// What one client saw.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) latencies_ms: Vec<f64>,
    /// Status → count, for every answer that was not 2xx (or 304).
    pub(super) refused: BTreeMap<u16, u64>,
    pub(super) requests: u64,
    pub(super) finished_games: u64,
}

impl Tally {
    pub(super) fn merge(&mut self, other: Tally) {
        self.latencies_ms.extend(other.latencies_ms);
        for (k, v) in other.refused {
            *self.refused.entry(k).or_default() += v;
        }
        self.requests += other.requests;
        self.finished_games += other.finished_games;
    }

    pub(super) fn note(&mut self, status: reqwest::StatusCode) {
        self.requests += 1;
        if !status.is_success() && status != reqwest::StatusCode::NOT_MODIFIED {
            *self.refused.entry(status.as_u16()).or_default() += 1;
        }
    }

    pub(super) fn errors(&self) -> u64 {
        self.refused.values().sum()
    }
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// The machine's CPU time counters (`/proc/stat`, Linux): user, nice,
/// system, idle, iowait, irq, softirq, steal.
pub(super) struct CpuTimes([u64; 8]);

impl CpuTimes {
    pub(super) fn now() -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().next()?.strip_prefix("cpu ")?;
        let mut times = [0u64; 8];
        for (slot, field) in times.iter_mut().zip(line.split_whitespace()) {
            *slot = field.parse().ok()?;
        }
        Some(CpuTimes(times))
    }

    /// [`CpuTimes::since`] from `before` to now, when both were read.
    pub(super) fn since_then(before: Option<CpuTimes>) -> Option<String> {
        before
            .zip(CpuTimes::now())
            .map(|(before, now)| now.since(&before))
    }

    /// `busy=<%> iowait=<%> steal=<%> idle=<%>` of the time since `before`.
    pub(super) fn since(&self, before: &CpuTimes) -> String {
        let d: Vec<f64> = self
            .0
            .iter()
            .zip(before.0)
            .map(|(a, b)| a.saturating_sub(b) as f64)
            .collect();
        let total: f64 = d.iter().sum::<f64>().max(1.0);
        let busy = d[0] + d[1] + d[2] + d[5] + d[6];
        format!(
            "cpu busy={:.0}% iowait={:.0}% steal={:.0}% idle={:.0}%",
            100.0 * busy / total,
            100.0 * d[4] / total,
            100.0 * d[7] / total,
            100.0 * d[3] / total
        )
    }
}

/// The processes whose CPU a run charges to its moves and to its baseline
/// rows: a server's, PostgreSQL's (every child of its postmaster: the
/// backends, and the WAL writer, checkpointer and autovacuum that the
/// writes make work), and loadgen's own.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Processes {
    pub(super) server: Option<u32>,
    pub(super) postmaster: Option<u32>,
}

/// The CPU time of [`Processes`] so far, in clock ticks (user + system).
pub(super) struct ProcessTicks {
    server: u64,
    postgres: PostgresTicks,
    own: u64,
}

/// CPU ticks [`Processes`] spent over some time, by process.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Spent {
    server: u64,
    postgres: u64,
    own: u64,
}

/// The unit of `/proc/<pid>/stat`'s times (`sysconf(_SC_CLK_TCK)`): 100 on
/// Linux, whatever the kernel's own tick rate.
pub(crate) const USER_HZ: f64 = 100.0;

impl Spent {
    pub(super) fn add(&mut self, other: Spent) {
        self.server += other.server;
        self.postgres += other.postgres;
        self.own += other.own;
    }

    /// `cpu_<what>: server_us=<a> postgres_us=<b> loadgen_us=<c> all_us=<d>`,
    /// µs a unit of `units` (moves, rows), and the µs of all three.
    pub(super) fn line(&self, what: &str, units: u64) -> (String, f64) {
        let us = |ticks: u64| ticks as f64 / USER_HZ * 1e6 / units.max(1) as f64;
        let all = us(self.server + self.postgres + self.own);
        let line = format!(
            "cpu_{what}: server_us={:.0} postgres_us={:.0} loadgen_us={:.0} all_us={all:.0}",
            us(self.server),
            us(self.postgres),
            us(self.own)
        );
        (line, all)
    }
}

impl Processes {
    /// Their ticks now; `None` unless both the server and the postmaster
    /// are given and readable.
    pub(super) fn ticks(&self) -> Option<ProcessTicks> {
        let (server, postmaster) = (self.server?, self.postmaster?);
        Some(ProcessTicks {
            server: ProcStat::of(server)?.ticks,
            postgres: PostgresTicks::of(postmaster)?,
            own: ProcStat::of(std::process::id())?.ticks,
        })
    }

    /// What they spent from `before` (taken by [`Self::ticks`]) to now.
    pub(super) fn spent_since(&self, before: Option<ProcessTicks>) -> Option<Spent> {
        Some(self.ticks()?.since(&before?))
    }
}

impl ProcessTicks {
    /// What each spent since `before`.
    fn since(&self, before: &ProcessTicks) -> Spent {
        Spent {
            server: self.server.saturating_sub(before.server),
            postgres: self.postgres.since(&before.postgres),
            own: self.own.saturating_sub(before.own),
        }
    }
}

/// The CPU ticks of PostgreSQL's processes so far: every child of its
/// postmaster, by pid.
pub(crate) struct PostgresTicks(HashMap<u32, u64>);

impl PostgresTicks {
    /// Read from `/proc`; `None` when it cannot be listed.
    pub(crate) fn of(postmaster: u32) -> Option<PostgresTicks> {
        let mut ticks = HashMap::new();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            // `None` too for a process that ended meanwhile.
            if let Some(stat) = ProcStat::of(pid).filter(|s| s.parent == postmaster) {
                ticks.insert(pid, stat.ticks);
            }
        }
        Some(PostgresTicks(ticks))
    }

    /// The ticks spent since `before`: a process started meanwhile counts
    /// whole; one that ended meanwhile is not counted.
    pub(crate) fn since(&self, before: &PostgresTicks) -> u64 {
        self.0
            .iter()
            .map(|(pid, t)| t.saturating_sub(before.0.get(pid).copied().unwrap_or(0)))
            .sum()
    }
}

/// What the run reads of a process's `/proc/<pid>/stat`.
pub(crate) struct ProcStat {
    pub(crate) parent: u32,
    /// CPU time so far, user + system, in clock ticks.
    pub(crate) ticks: u64,
}

impl ProcStat {
    pub(crate) fn of(pid: u32) -> Option<ProcStat> {
        Self::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn parse(stat: &str) -> Option<ProcStat> {
        // The fields after the command name (which may hold spaces and
        // parentheses): state, ppid, …, utime (14th of the line), stime.
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |i: usize| fields.get(i)?.parse::<u64>().ok();
        Some(ProcStat {
            parent: u32::try_from(field(1)?).ok()?,
            ticks: field(11)? + field(12)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_the_parent_and_user_plus_system_ticks() {
        // A command name with spaces and parentheses, as a process may set.
        let line = "4242 (postgres: a (b) c) S 17 4242 4242 0 -1 4194560 \
                    512 0 0 0 130 27 0 0 20 0 1 0 8861 226435072 4200";
        let stat = ProcStat::parse(line).unwrap();
        assert_eq!((stat.parent, stat.ticks), (17, 157));
        assert!(ProcStat::parse("4242 (cut short) S 17").is_none());
        assert!(ProcStat::parse("no parenthesis").is_none());
    }
}
