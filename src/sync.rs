//! Poison-tolerant lock access and the id counter, shared by the registry
//! and the pipeline.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Reads a lock. A panic elsewhere never leaves the registry half-written
/// (every write replaces a whole value), so a poisoned lock is still read.
pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

/// Writes a lock, poisoned or not (see [`read`]).
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// Registry-unique ids: registrations, batches, approval requests.
#[derive(Default)]
pub(crate) struct Ids(AtomicU64);

impl Ids {
    pub(crate) fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}
