//! The one way the engine runs user code. A callback (a tool body, a
//! listener, a guard, the answerer, a sink, a predicate) may panic while it
//! makes its future — a plain `Fn` that does work before `async` — or while
//! that future runs; both are caught here, the same way, and every caller
//! turns the panic into its stage's failure.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};

use futures::FutureExt;
use futures::future::Either;

use crate::error::BoxError;

/// A user callback panicked; the text of its payload.
#[derive(Debug)]
pub(crate) struct Panicked(String);

impl Panicked {
    fn from_payload(payload: Box<dyn Any + Send>) -> Self {
        let text = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic with a non-text payload".to_owned()
        };
        Self(text)
    }
}

impl fmt::Display for Panicked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Calls `make` and awaits the future it returns, catching a panic in either.
///
/// Unwind safety is asserted: the engine never reads state a panicking
/// callback could have left half-written (listener lists are copy-on-write
/// snapshots, no lock is held while a callback runs).
///
/// Not an `async fn`: its state would keep the callback's future twice
/// (the made future, and again inside [`finish`]'s), and every call's
/// future, which nests the pipeline's stages through here, that much
/// larger. This holds one at a time: `make`, then the future it made.
pub(crate) fn run<Fut: Future>(make: impl FnOnce() -> Fut) -> impl Future<Output = Result<Fut::Output, Panicked>> {
    futures::future::lazy(move |_| run_sync(make)).then(|made| match made {
        Ok(future) => Either::Left(finish(future)),
        Err(panicked) => Either::Right(std::future::ready(Err(panicked))),
    })
}

/// [`run`] for a fallible callback: a panic becomes an error saying so.
pub(crate) async fn run_fallible<T, Fut>(make: impl FnOnce() -> Fut) -> Result<T, BoxError>
where
    Fut: Future<Output = Result<T, BoxError>>,
{
    match run(make).await {
        Ok(result) => result,
        Err(panicked) => Err(format!("panicked: {panicked}").into()),
    }
}

/// Runs a synchronous callback (a concurrency predicate, a change listener,
/// or the half of an async callback that makes its future), catching a panic.
pub(crate) fn run_sync<T>(callback: impl FnOnce() -> T) -> Result<T, Panicked> {
    catch_unwind(AssertUnwindSafe(callback)).map_err(Panicked::from_payload)
}

/// Awaits a future made by [`run_sync`], catching a panic. Only for a caller
/// that must make the future at a moment of its choosing (the tool body,
/// started right after its last cancellation check); everything else uses
/// [`run`].
pub(crate) fn finish<Fut: Future>(future: Fut) -> impl Future<Output = Result<Fut::Output, Panicked>> {
    AssertUnwindSafe(future)
        .catch_unwind()
        .map(|caught| caught.map_err(Panicked::from_payload))
}
