//! Event loops in background threads ([`crate::server::spawn`], [`crate::router::spawn`]):
//! a stop request the loop checks and an eventfd that wakes it from its wait, and the
//! [`Background`] handle that stops and joins the thread.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use nix::sys::eventfd::{EfdFlags, EventFd};

use crate::error::{Error, Result};

/// Owned by an event loop: whether a stop was requested, and the descriptor that wakes its
/// wait when one is.
#[derive(Debug)]
pub struct StopSignal {
    stop: Arc<AtomicBool>,
    wake: EventFd,
}

impl StopSignal {
    pub(crate) fn new() -> Result<Self> {
        let wake = EventFd::from_flags(EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
            .map_err(|e| Error::network("eventfd", e.into()))?;
        Ok(StopSignal { stop: Arc::new(AtomicBool::new(false)), wake })
    }

    /// Whether the loop must end.
    pub(crate) fn requested(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// The descriptor to wait on (readable once a stop is requested).
    pub(crate) fn wake_fd(&self) -> &EventFd {
        &self.wake
    }

    /// Consume a wake-up.
    pub(crate) fn drain(&self) {
        let _ = self.wake.read();
    }

    /// A handle another thread can stop the loop with.
    pub(crate) fn remote(&self) -> Result<Stopper> {
        // A duplicate of the loop's eventfd wakes the same wait.
        let dup = std::os::fd::AsFd::as_fd(&self.wake).try_clone_to_owned().map_err(|e| Error::network("dup", e))?;
        // SAFETY: `dup` duplicates a valid eventfd descriptor.
        let wake = unsafe { EventFd::from_owned_fd(dup) };
        Ok(Stopper { stop: self.stop.clone(), wake })
    }
}

/// Stops a loop from another thread (see [`StopSignal::remote`]).
pub struct Stopper {
    stop: Arc<AtomicBool>,
    wake: EventFd,
}

/// A loop running in a background thread, listening on an address. Dropping the handle
/// stops it.
pub struct Background<T> {
    addr: SocketAddr,
    stopper: Stopper,
    thread: Option<JoinHandle<Result<T>>>,
    what: &'static str,
}

impl<T: Default> Background<T> {
    /// Run `run` in a thread called `name`; `stopper` stops it (from its [`StopSignal`]).
    pub(crate) fn spawn(
        name: &'static str,
        addr: SocketAddr,
        stopper: Stopper,
        run: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<Self>
    where
        T: Send + 'static,
    {
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(run)
            .map_err(|e| Error::network(format!("cannot start the {name} thread"), e))?;
        Ok(Background { addr, stopper, thread: Some(thread), what: name })
    }

    /// The address it listens on (with the port chosen if 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop it and return what its loop returned.
    pub fn stop(mut self) -> Result<T> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<T> {
        self.stopper.stop.store(true, Ordering::Release);
        let _ = self.stopper.wake.write(1);
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| Error::Runtime(format!("{} thread panicked", self.what)))?,
            None => Ok(T::default()),
        }
    }
}

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        self.stopper.stop.store(true, Ordering::Release);
        let _ = self.stopper.wake.write(1);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
