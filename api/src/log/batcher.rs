//! Requests of many handlers served together: a few tasks each take every
//! request queued meanwhile and serve them in one go (one statement, one
//! round trip to PostgreSQL). Alone, a request is served at once, by
//! itself; under load, the more requests wait, the more each batch holds.
//!
//! The log's writer ([`crate::log::writer`]) and announcer
//! ([`crate::log::announce`]), and the version reads
//! ([`crate::log::versions`]) are batched this way.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// What is batched, and how a batch is served.
pub trait Work: Send + Sync + 'static {
    type Item: Send + 'static;
    type Answer: Send + 'static;
    /// How many batches may be served at once.
    const TASKS: usize;

    /// Moves the next batch out of `waiting` (not empty) into `batch`;
    /// what stays waits for the next one, in order. By default, everything.
    fn take(waiting: &mut VecDeque<Waiting<Self>>, batch: &mut Vec<Waiting<Self>>) {
        batch.extend(waiting.drain(..));
    }

    /// Serves a batch: an answer per item, in order.
    fn serve(&self, items: Vec<Self::Item>) -> impl Future<Output = Vec<Self::Answer>> + Send;
}

/// A queued item and where its answer goes (nowhere when nobody waits).
pub type Waiting<W> = (
    <W as Work>::Item,
    Option<oneshot::Sender<<W as Work>::Answer>>,
);

/// The queue of one kind of [`Work`] and its tasks; cheap to clone.
pub struct Batcher<W: Work> {
    work: Arc<W>,
    queue: Arc<Mutex<Queue<W>>>,
    /// Where the tasks run: the runtime that made the batcher (the
    /// process's main one), not the actix worker of the request that
    /// starts a task (a worker's tasks stop with it, and wait while it
    /// computes).
    runtime: Handle,
}

impl<W: Work> Clone for Batcher<W> {
    fn clone(&self) -> Self {
        Self {
            work: self.work.clone(),
            queue: self.queue.clone(),
            runtime: self.runtime.clone(),
        }
    }
}

impl<W: Work + std::fmt::Debug> std::fmt::Debug for Batcher<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").field("work", &self.work).finish()
    }
}

struct Queue<W: Work> {
    waiting: VecDeque<Waiting<W>>,
    /// Tasks running.
    tasks: usize,
}

impl<W: Work> Batcher<W> {
    /// A batcher whose tasks run on the current runtime.
    pub fn new(work: W) -> Self {
        Self {
            work: Arc::new(work),
            queue: Arc::new(Mutex::new(Queue {
                waiting: VecDeque::new(),
                tasks: 0,
            })),
            runtime: Handle::current(),
        }
    }

    pub fn work(&self) -> &W {
        &self.work
    }

    /// Queues `item` and waits for its answer; `None` if the task serving
    /// it died (a panic).
    pub async fn ask(&self, item: W::Item) -> Option<W::Answer> {
        let (reply, answer) = oneshot::channel();
        self.queue_item(item, Some(reply));
        answer.await.ok()
    }

    /// Queues `item`; nobody waits for its answer.
    pub fn tell(&self, item: W::Item) {
        self.queue_item(item, None);
    }

    fn queue_item(&self, item: W::Item, reply: Option<oneshot::Sender<W::Answer>>) {
        let start = {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.waiting.push_back((item, reply));
            q.tasks < W::TASKS && {
                q.tasks += 1;
                true
            }
        };
        if start {
            self.runtime.spawn(self.clone().run());
        }
    }

    /// A task: batches until none is waiting.
    async fn run(self) {
        let mut shift = Shift {
            queue: &self.queue,
            over: false,
        };
        let mut batch = Vec::new();
        loop {
            {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                if q.waiting.is_empty() {
                    q.tasks -= 1;
                    shift.over = true;
                    return;
                }
                W::take(&mut q.waiting, &mut batch);
            }
            let (items, replies): (Vec<W::Item>, Vec<_>) = batch.drain(..).unzip();
            let answers = self.work.serve(items).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                if let Some(reply) = reply {
                    // A request that is gone was served all the same.
                    let _ = reply.send(answer);
                }
            }
        }
    }
}

/// A task's place among the [`Work::TASKS`]: given back when the task ends
/// otherwise than by finding the queue empty (a panic, its runtime
/// stopping), so that the next request starts a task again. The task frees
/// its place itself, under the same lock as its finding the queue empty:
/// freed later, when this guard drops, a request queued in between would
/// wait for the next one.
struct Shift<'a, W: Work> {
    queue: &'a Mutex<Queue<W>>,
    over: bool,
}

impl<W: Work> Drop for Shift<'_, W> {
    fn drop(&mut self) {
        if !self.over {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.tasks -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::sync::Semaphore;

    use super::*;

    /// Doubles its items and records its batches; a batch waits for a
    /// permit of `gate` (closed or open), and item 13 panics.
    struct Doubling<const TASKS: usize> {
        batches: Mutex<Vec<Vec<u32>>>,
        gate: Semaphore,
        serving: AtomicUsize,
        most_serving: AtomicUsize,
    }

    impl<const TASKS: usize> Doubling<TASKS> {
        fn batcher(open: bool) -> Batcher<Self> {
            Batcher::new(Doubling {
                batches: Mutex::default(),
                gate: Semaphore::new(if open { Semaphore::MAX_PERMITS } else { 0 }),
                serving: AtomicUsize::new(0),
                most_serving: AtomicUsize::new(0),
            })
        }

        fn batches(&self) -> Vec<Vec<u32>> {
            self.batches.lock().unwrap().clone()
        }
    }

    impl<const N: usize> Work for Doubling<N> {
        type Item = u32;
        type Answer = u32;
        const TASKS: usize = N;

        async fn serve(&self, items: Vec<u32>) -> Vec<u32> {
            let now = self.serving.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_serving.fetch_max(now, Ordering::SeqCst);
            self.batches.lock().unwrap().push(items.clone());
            self.gate.acquire().await.expect("open").forget();
            self.serving.fetch_sub(1, Ordering::SeqCst);
            assert!(!items.contains(&13), "13 is refused");
            items.iter().map(|i| i * 2).collect()
        }
    }

    /// Yields until `f` holds (the tasks run on this test's runtime).
    async fn until(f: impl Fn() -> bool) {
        for _ in 0..10_000 {
            if f() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("never came true");
    }

    #[tokio::test]
    async fn a_lone_request_is_served_at_once_and_the_requests_queued_meanwhile_together() {
        let b = Doubling::<1>::batcher(false);
        let first = tokio::spawn({
            let b = b.clone();
            async move { b.ask(0).await }
        });
        until(|| b.work().serving.load(Ordering::SeqCst) == 1).await;
        let rest: Vec<_> = (1..6)
            .map(|i| {
                let b = b.clone();
                tokio::spawn(async move { b.ask(i).await })
            })
            .collect();
        until(|| b.queue.lock().unwrap().waiting.len() == 5).await;
        b.work().gate.add_permits(2);
        assert_eq!(first.await.unwrap(), Some(0));
        for (i, r) in (1..6).zip(rest) {
            assert_eq!(r.await.unwrap(), Some(i * 2), "each its own answer");
        }
        assert_eq!(b.work().batches(), [vec![0], vec![1, 2, 3, 4, 5]]);
        assert_eq!(b.queue.lock().unwrap().tasks, 0, "the task ended");
    }

    #[tokio::test]
    async fn no_more_than_tasks_batches_are_served_at_once() {
        let b = Doubling::<2>::batcher(false);
        let mut asked = Vec::new();
        for i in 0..3 {
            let c = b.clone();
            asked.push(tokio::spawn(async move { c.ask(i).await }));
            if i < 2 {
                until(|| b.work().serving.load(Ordering::SeqCst) == i as usize + 1).await;
            }
        }
        until(|| b.queue.lock().unwrap().waiting.len() == 1).await;
        assert_eq!(b.queue.lock().unwrap().tasks, 2);
        b.work().gate.add_permits(3);
        for (i, a) in (0..3).zip(asked) {
            assert_eq!(a.await.unwrap(), Some(i * 2));
        }
        assert_eq!(b.work().most_serving.load(Ordering::SeqCst), 2);
        assert_eq!(b.work().batches(), [vec![0], vec![1], vec![2]]);
    }

    #[tokio::test]
    async fn what_is_told_is_served_with_nobody_waiting() {
        let b = Doubling::<1>::batcher(true);
        b.tell(7);
        assert_eq!(b.ask(1).await, Some(2));
        let served: Vec<u32> = b.work().batches().concat();
        assert!(served.contains(&7), "{served:?}");
    }

    #[tokio::test]
    async fn a_task_that_panics_gives_its_place_back() {
        let b = Doubling::<1>::batcher(true);
        assert_eq!(b.ask(13).await, None, "its request learns it");
        let next = tokio::time::timeout(Duration::from_secs(5), b.ask(1)).await;
        assert_eq!(next.expect("a new task serves it"), Some(2));
    }
}
