//! Exported logs (`GET …/log`, NDJSON) checked with no database: `huit log
//! verify` runs the audit on the lines alone ([`super::from_ndjson`]).

use std::fmt::Write as _;

use super::{audit, audit_text, AuditReport, Log};

/// What `huit log verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub report: AuditReport,
    /// The log ends with the game's end (`game_ended`, `game_aborted`), as
    /// a player's export does.
    pub complete: bool,
    /// It holds: the audit passed, and the log is complete unless a partial
    /// one was accepted.
    pub holds: bool,
    /// The line of the first problem (a sound log's line N holds seq N).
    pub first_bad_line: Option<usize>,
}

/// The audit of an exported log (the chain, every hash, every round's
/// scores re-folded), and whether it is whole: a log that stops before
/// the game's end fails unless `partial` (an admin's export of a running
/// game).
pub fn verify_export(log: &Log, partial: bool) -> Verdict {
    let report = audit(log);
    let complete = log.is_over();
    let first_bad_line = match report.first_bad_seq {
        Some(seq) => Some(
            log.events
                .iter()
                .position(|e| e.seq >= seq)
                .unwrap_or(log.events.len())
                + 1,
        ),
        None if !complete && !partial => Some(log.events.len() + 1),
        None => None,
    };
    Verdict {
        holds: report.ok && (complete || partial),
        complete,
        first_bad_line,
        report,
    }
}

/// The verdict as text: the audit, then one line saying whether it holds.
pub fn verdict_text(log: &Log, v: &Verdict) -> String {
    let mut out = audit_text(&log.source, &v.report);
    if !v.complete {
        let _ = writeln!(
            out,
            "the log ends before the game did{}",
            if v.holds {
                " (accepted: --partial)"
            } else {
                ": cut short, or exported while the game ran (--partial accepts that)"
            }
        );
    }
    match (v.holds, v.first_bad_line) {
        (true, _) => {
            let _ = writeln!(
                out,
                "log verify: OK ({} events, {} rounds re-scored)",
                v.report.events,
                v.report.rounds.len()
            );
        }
        (false, Some(line)) => {
            let _ = writeln!(out, "log verify: FAILED (first bad line {line})");
        }
        (false, None) => {
            let _ = writeln!(out, "log verify: FAILED");
        }
    }
    out
}
