//! Open files and sockets: the descriptor limit, and how many connections
//! each worker takes from it.

use std::time::Duration;

use crate::config::Settings;

/// Raises this process's soft limit of open files to its hard limit (a
/// server holds a descriptor per connection) and answers the limit now in
/// force (1024, a common default, when it cannot be read).
pub fn raise_descriptor_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "the open-file limit could not be raised");
            descriptor_limit() as u64
        }
    }
}

/// The soft limit of open files of this process.
pub(super) fn descriptor_limit() -> usize {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .map(|(soft, _)| usize::try_from(soft).unwrap_or(usize::MAX))
        .unwrap_or(1024)
}

/// What each accepted connection is set to.
#[derive(Debug, Clone, Copy)]
pub(super) struct SocketOptions {
    stalled_reader: Duration,
    send_buffer: usize,
}

impl SocketOptions {
    pub(super) fn of(settings: &Settings) -> Self {
        Self {
            stalled_reader: settings.stalled_reader(),
            send_buffer: settings.send_buffer_bytes,
        }
    }

    /// A client that acknowledges nothing of what was sent to it for
    /// `stalled_reader` loses its connection: the kernel aborts it
    /// (`TCP_USER_TIMEOUT`, which covers a zero window too), the pending
    /// write fails and the request ends. Until then a stalled reader holds
    /// what actix-web buffers for a connection (32 KiB) and the socket's
    /// send buffer, both bounded: a stream keeps no queue of frames (a view
    /// stream has the latest view, an event stream reads the log as it
    /// writes out), and its client resumes with `Last-Event-ID`. Other
    /// connections are not held back: each has its buffers and its task.
    pub(super) fn apply(self, connection: &dyn std::any::Any) {
        let Some(tcp) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
            return;
        };
        let socket = socket2::SockRef::from(tcp);
        let set = socket
            .set_tcp_user_timeout(Some(self.stalled_reader))
            .and_then(|()| match self.send_buffer {
                0 => Ok(()),
                bytes => socket.set_send_buffer_size(bytes),
            });
        if let Err(e) = set {
            tracing::warn!(error = %e, "a connection's socket options not set");
        }
    }
}

/// Connections a worker accepts at once: the descriptors less a reserve
/// (64 and a thirty-second of them: the pool, the listener, logs, the
/// webhooks' connections), shared by the workers. At this machine's 20,000
/// descriptors, 19,311 connections: room for 18,000 streams (seven eighths,
/// as it was, stopped them at 17,444).
pub(super) fn connections_per_worker(descriptors: usize, workers: Option<usize>) -> usize {
    let workers = workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let reserve = 64 + descriptors / 32;
    (descriptors.saturating_sub(reserve) / workers.max(1)).clamp(16, 25_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_leave_a_reserve_of_descriptors_and_room_for_eighteen_thousand_streams() {
        let at =
            |descriptors, workers| connections_per_worker(descriptors, Some(workers)) * workers;
        assert!(at(20_000, 2) >= 18_000 + 4 * 64, "{}", at(20_000, 2));
        assert!(at(20_000, 2) <= 20_000 - 64 - 625);
        assert!(at(256, 2) <= 256 - 64);
        assert_eq!(connections_per_worker(64, Some(1)), 16);
    }
}
