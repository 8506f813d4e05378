//! What the load measures: each client's tally of answers and latencies,
//! their percentiles, and the machine's CPU shares meanwhile.

use std::collections::BTreeMap;

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
