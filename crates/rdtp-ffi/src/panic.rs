//! The panic boundary of the C ABI.
//!
//! Under edition 2024 a Rust panic that reaches an `extern "C"` function aborts the process
//! (a whole ns-3 simulation, say, without a word about where). Every entry point of this
//! crate therefore runs its body through [`guard`]: a panic stops there, its message is
//! kept for the calling thread (`rdtp_take_panic`), the host's handler, if it set one
//! (`rdtp_set_panic_handler`), is called with it, and the entry point returns its failure
//! value — null, false, 0, "failed", or nothing — so the host can fail its run with the
//! message instead of aborting. The standard panic hook still prints the message and the
//! source location on stderr first.
//!
//! After a panic, the handle the call was made on is memory-safe but in an unspecified
//! state: free it, do not drive it further.
//!
//! This module holds no protocol logic, and it must not change what a call returns when
//! nothing panics.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

/// Called with the message of a panic the C ABI caught (NUL-terminated, valid during the
/// call), on the thread that panicked, after the panic stopped. It may return (the entry
/// point then returns its failure value) or end the process (`exit`); it must not unwind
/// (throw a C++ exception) through the Rust frames below it.
pub type RdtpPanicHandler = Option<unsafe extern "C" fn(message: *const c_char)>;

static HANDLER: Mutex<RdtpPanicHandler> = Mutex::new(None);

thread_local! {
    /// The message of the last panic caught on this thread and not yet taken.
    static LAST: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Run the body of the entry point `entry`: its value, or `failure` if it panicked (the
/// message kept and handed to the host's handler).
pub fn guard<R>(entry: &'static str, failure: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        tests::maybe_panic(entry);
        body()
    })) {
        Ok(value) => value,
        Err(payload) => {
            caught(entry, payload.as_ref());
            failure
        }
    }
}

fn caught(entry: &str, payload: &(dyn Any + Send)) {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message");
    let text = format!("{entry} panicked: {what}").replace('\0', " ");
    let message = CString::new(text).unwrap_or_default();
    let handler = *HANDLER.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(handler) = handler {
        // SAFETY: the host's handler takes a NUL-terminated string valid during the call.
        unsafe { handler(message.as_ptr()) };
    }
    LAST.with(|last| *last.borrow_mut() = Some(message));
}

/// Copy `message` NUL-terminated into `buf` (truncated at a character boundary to `cap` - 1
/// bytes; nothing if `buf` is null or `cap` 0); returns the full length.
///
/// # Safety
/// `buf` is null or writable for `cap` bytes.
pub(crate) unsafe fn write_message(message: &str, buf: *mut c_char, cap: usize) -> usize {
    if !buf.is_null() && cap > 0 {
        let mut n = message.len().min(cap - 1);
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: the caller's buffer holds `cap` > n bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(message.as_ptr().cast::<c_char>(), buf, n);
            *buf.add(n) = 0;
        }
    }
    message.len()
}

/// Call `handler` with the message of every panic the C ABI catches from now on, in any
/// thread (null: no handler, the default). The ns-3 runner's handler fails the run with the
/// message.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_set_panic_handler(handler: RdtpPanicHandler) {
    *HANDLER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = handler;
}

/// The message of the last panic an rdtp call on this thread caught ("ENTRY panicked:
/// MESSAGE"), written NUL-terminated to `buf` (truncated to `cap` - 1 bytes) and forgotten;
/// returns its length, 0 if no call panicked since the last take. With `cap` 0 it only
/// returns the length and keeps the message.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_take_panic(buf: *mut c_char, cap: usize) -> usize {
    guard("rdtp_take_panic", 0, || {
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            let Some(message) = last.as_ref() else { return 0 };
            let text = message.to_str().unwrap_or_default();
            // SAFETY: the caller's buffer holds `cap` bytes.
            let n = unsafe { write_message(text, buf, cap) };
            if cap > 0 {
                *last = None;
            }
            n
        })
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;
    use std::ffi::CStr;

    use super::*;

    thread_local! {
        /// The entry point the next guarded call of which panics (tests only).
        static PANIC_IN: Cell<Option<&'static str>> = const { Cell::new(None) };
    }

    /// The test hook: panic inside the boundary if `entry` was armed on this thread.
    pub(crate) fn maybe_panic(entry: &str) {
        if PANIC_IN.with(|p| p.get().is_some_and(|armed| armed == entry)) {
            PANIC_IN.with(|p| p.set(None));
            panic!("test panic inside {entry}");
        }
    }

    /// Make the next call of `entry` on this thread panic inside its boundary.
    pub(crate) fn arm(entry: &'static str) {
        PANIC_IN.with(|p| p.set(Some(entry)));
    }

    pub(crate) fn take() -> Option<String> {
        let n = unsafe { rdtp_take_panic(core::ptr::null_mut(), 0) };
        if n == 0 {
            return None;
        }
        let mut buf = vec![0 as c_char; n + 1];
        assert_eq!(unsafe { rdtp_take_panic(buf.as_mut_ptr(), buf.len()) }, n);
        assert_eq!(unsafe { rdtp_take_panic(buf.as_mut_ptr(), buf.len()) }, 0, "taken once");
        Some(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_string())
    }

    #[test]
    fn a_panic_becomes_the_failure_value_and_a_message() {
        assert_eq!(guard("f", 7, || 1), 1);
        assert_eq!(take(), None);
        assert_eq!(guard("f", 7, || panic!("bad {}", 3)), 7);
        assert_eq!(take().as_deref(), Some("f panicked: bad 3"));
        assert!(!guard("g", false, || std::panic::panic_any(5u8)));
        assert_eq!(take().as_deref(), Some("g panicked: a panic without a message"));
        // A short buffer gets a truncated copy, and the full length.
        guard("h", (), || panic!("ééé"));
        let mut buf = [0 as c_char; 16];
        assert_eq!(unsafe { rdtp_take_panic(buf.as_mut_ptr(), buf.len()) }, "h panicked: ééé".len());
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), "h panicked: é");
    }

    /// Real entry points made to panic by the test hook: each returns its failure value,
    /// the message names it, the host's handler hears of it, and the next call works.
    #[test]
    fn a_call_that_panics_fails_with_a_message_instead_of_aborting() {
        static HEARD: Mutex<Vec<String>> = Mutex::new(Vec::new());
        unsafe extern "C" fn hear(message: *const c_char) {
            let text = unsafe { CStr::from_ptr(message) }.to_str().unwrap().to_string();
            HEARD.lock().unwrap().push(text);
        }
        rdtp_set_panic_handler(Some(hear));
        let new = || unsafe {
            crate::rdtp_receiver_new_from_spec(
                core::ptr::null(),
                core::ptr::null(),
                c"obj".as_ptr(),
                crate::node::rdtp_addr_v4(0x0a00_0001, 7447),
                0,
                core::ptr::null_mut(),
                0,
            )
        };
        arm("rdtp_receiver_new_from_spec");
        assert!(new().is_null());
        let want = "rdtp_receiver_new_from_spec panicked: test panic inside rdtp_receiver_new_from_spec";
        assert_eq!(take().as_deref(), Some(want));
        assert!(HEARD.lock().unwrap().iter().any(|m| m == want), "the handler was not called");

        let rx = new();
        assert!(!rx.is_null());
        let mut buf = [0u8; crate::RDTP_MAX_REQUEST];
        let to = core::ptr::null_mut();
        arm("rdtp_node_poll_transmit");
        assert_eq!(unsafe { crate::node::rdtp_node_poll_transmit(rx, 0, buf.as_mut_ptr(), buf.len(), to) }, 0);
        assert!(take().is_some_and(|m| m.starts_with("rdtp_node_poll_transmit panicked")));
        assert!(unsafe { crate::node::rdtp_node_poll_transmit(rx, 0, buf.as_mut_ptr(), buf.len(), to) } > 0);
        arm("rdtp_receiver_status");
        assert_eq!(unsafe { crate::rdtp_receiver_status(rx) }, 2, "a panicked status reads as failed");
        assert!(take().is_some());
        arm("rdtp_node_handle_datagram");
        let from = crate::node::rdtp_addr_v4(0x0a00_0001, 7447);
        assert!(!unsafe { crate::node::rdtp_node_handle_datagram(rx, 1, from, buf.as_ptr(), 10) });
        assert!(take().is_some_and(|m| m.contains("rdtp_node_handle_datagram")));
        assert_eq!(unsafe { crate::rdtp_receiver_status(rx) }, 0);
        unsafe { crate::node::rdtp_node_free(rx) };
        assert_eq!(take(), None);
        rdtp_set_panic_handler(None);
    }

    /// Every exported `extern "C"` function of the crate runs its body inside `guard` under its own
    /// name, except those that only build a C struct from constants (nothing to panic).
    #[test]
    fn every_entry_point_is_guarded_under_its_own_name() {
        const PLAIN: [&str; 3] =
            ["rdtp_receiver_config_default", "rdtp_router_config_default", "rdtp_set_panic_handler"];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut rest = text.as_str();
            while let Some(at) = rest.find("extern \"C\" fn ") {
                let exported = rest[..at].ends_with("pub ") || rest[..at].ends_with("pub unsafe ");
                rest = &rest[at + "extern \"C\" fn ".len()..];
                if !exported {
                    continue;
                }
                let name = &rest[..rest.find('(').unwrap()];
                let body_start = rest.find("\n{").or_else(|| rest.find(" {\n")).unwrap();
                let body = &rest[body_start..rest.find("\n}").unwrap()];
                if PLAIN.contains(&name) {
                    continue;
                }
                let guarded = body.trim_start_matches([' ', '{', '\n']).starts_with(&format!("guard(\"{name}\","));
                assert!(guarded, "{}: {name} does not start with guard(\"{name}\", …)", path.display());
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} entry points found");
    }
}
