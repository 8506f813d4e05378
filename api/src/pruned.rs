//! Maps of this process's shared state that keep entries only while they
//! are needed (the tables cached, the wake-up counters, the versions read
//! lately), and drop the others in one pass once the map has doubled since
//! the last pass: adding an entry costs no scan of every entry while most
//! are still needed (tens of thousands of idle streams each ask for theirs
//! at every keep-alive).

use std::collections::HashMap;
use std::hash::Hash;
use std::ops::{Deref, DerefMut};

/// A map pruned once it has doubled ([`Pruned::prune`]); read and written
/// as a `HashMap` otherwise.
#[derive(Debug)]
pub struct Pruned<K, V> {
    map: HashMap<K, V>,
    /// Never pruned at or below this many entries.
    floor: usize,
    /// Twice the entries the last pass kept.
    prune_at: usize,
}

impl<K: Hash + Eq, V> Pruned<K, V> {
    pub fn new(floor: usize) -> Self {
        Self {
            map: HashMap::new(),
            floor,
            prune_at: 0,
        }
    }

    /// Keeps only the entries `keep` wants, if the map is past its floor and
    /// past twice what the last pass kept: call it before adding one.
    pub fn prune(&mut self, keep: impl FnMut(&K, &mut V) -> bool) {
        if self.map.len() > self.prune_at.max(self.floor) {
            self.map.retain(keep);
            self.prune_at = 2 * self.map.len();
        }
    }
}

impl<K, V> Deref for Pruned<K, V> {
    type Target = HashMap<K, V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<K, V> DerefMut for Pruned<K, V> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.map
    }
}

#[cfg(test)]
mod tests {
    use super::Pruned;

    #[test]
    fn a_pass_drops_what_is_not_wanted_only_past_the_floor_then_past_twice_what_it_kept() {
        let mut map: Pruned<u32, bool> = Pruned::new(4);
        // Four wanted (true), one not.
        for k in 0..4 {
            map.prune(|_, wanted| *wanted);
            map.insert(k, true);
        }
        map.prune(|_, wanted| *wanted);
        map.insert(100, false);
        assert_eq!(map.len(), 5, "not past the floor before it");
        map.prune(|_, wanted| *wanted);
        assert_eq!(map.len(), 4, "100 dropped");
        for k in 101..106 {
            map.prune(|_, wanted| *wanted);
            map.insert(k, false);
        }
        assert_eq!(map.len(), 9, "no pass up to twice the 4 kept");
        map.prune(|_, wanted| *wanted);
        assert_eq!(map.len(), 4, "the four wanted");
    }
}
