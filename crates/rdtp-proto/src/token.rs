//! Address-validation tokens: how a server or router knows, without keeping state per
//! client, that a request's source address really asked (RFC 9000 §8.1's address
//! validation, kept stateless as QUIC's Retry and NEW_TOKEN tokens are).
//!
//! A token is a MAC over the client's address — IP address **and UDP port** — and a time
//! epoch, under a key derived from the node's secret and that epoch:
//! `epoch (4 bytes, big-endian) · MAC (16 bytes)`, with
//! MAC = BLAKE3-keyed(key(epoch), ip (16 bytes, IPv4 mapped) · port (2 bytes) · epoch)[..16]
//! and key(epoch) = BLAKE3-keyed(secret, "rdtp address token" · epoch). A token is valid
//! during its epoch and the next one, so keys rotate every `period` without a list of them,
//! and a token lives between one and two periods. A node that restarts with a new secret
//! invalidates every token: clients then pay one round trip for a fresh one.
//!
//! The port is part of what a token proves (issue 23, item 5): a host that shares its IP
//! address with others (behind a NAT, a multi-user machine) can only make a node answer its
//! own port, not a neighbour's. A client whose port changes (NAT rebinding, a new socket)
//! pays one Retry for a token naming the new one.
//!
//! Only the node that issued a token can check it; to everyone else it is opaque bytes.

use std::net::{IpAddr, SocketAddr};

use core::time::Duration;

use crate::time::Time;

/// Length of the tokens this module issues.
pub const TOKEN_LEN: usize = 20;
/// Longest token a node accepts in a request: all the wire allows, so other schemes fit
/// (defined with the wire format, which this module builds on).
pub use crate::wire::MAX_TOKEN_LEN;

/// Issues and checks tokens. Cheap to keep: two cached epoch keys.
#[derive(Clone)]
pub struct TokenKeys {
    secret: [u8; 32],
    period: Duration,
    /// `(epoch, key)` of the two most recent epochs seen.
    cache: [(u32, [u8; 32]); 2],
}

impl core::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TokenKeys").field("period", &self.period).finish_non_exhaustive()
    }
}

impl TokenKeys {
    /// Keys from `secret` (keep it secret: anyone who knows it can mint tokens), rotating
    /// every `period` (at least a second).
    pub fn new(secret: [u8; 32], period: Duration) -> Self {
        let period = period.max(Duration::from_secs(1));
        let mut k = TokenKeys { secret, period, cache: [(u32::MAX, [0; 32]); 2] };
        k.cache = [(0, k.derive(0)), (1, k.derive(1))];
        k
    }

    fn epoch(&self, now: Time) -> u32 {
        (now.as_nanos() / self.period.as_nanos().max(1) as u64) as u32
    }

    fn derive(&self, epoch: u32) -> [u8; 32] {
        let mut h = blake3::Hasher::new_keyed(&self.secret);
        h.update(b"rdtp address token");
        h.update(&epoch.to_be_bytes());
        *h.finalize().as_bytes()
    }

    fn key(&mut self, epoch: u32) -> [u8; 32] {
        if let Some((_, k)) = self.cache.iter().find(|(e, _)| *e == epoch) {
            return *k;
        }
        let k = self.derive(epoch);
        // Keep the newer of the two cached epochs.
        let older = if self.cache[0].0 < self.cache[1].0 { 0 } else { 1 };
        self.cache[older] = (epoch, k);
        k
    }

    fn mac(&mut self, epoch: u32, addr: SocketAddr) -> [u8; 16] {
        let key = self.key(epoch);
        let ip16 = match addr.ip() {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        };
        let mut h = blake3::Hasher::new_keyed(&key);
        h.update(&ip16);
        h.update(&addr.port().to_be_bytes());
        h.update(&epoch.to_be_bytes());
        let mut mac = [0u8; 16];
        mac.copy_from_slice(&h.finalize().as_bytes()[..16]);
        mac
    }

    /// A token for `addr` (IP address and port) at `now`.
    pub fn issue(&mut self, now: Time, addr: SocketAddr) -> [u8; TOKEN_LEN] {
        let epoch = self.epoch(now);
        let mut t = [0u8; TOKEN_LEN];
        t[..4].copy_from_slice(&epoch.to_be_bytes());
        t[4..].copy_from_slice(&self.mac(epoch, addr));
        t
    }

    /// Whether `token` was issued to `addr` (the same IP address and port) by these keys
    /// during this epoch or the previous.
    pub fn validate(&mut self, now: Time, addr: SocketAddr, token: &[u8]) -> bool {
        let Ok(t) = <[u8; TOKEN_LEN]>::try_from(token) else { return false };
        let epoch = u32::from_be_bytes([t[0], t[1], t[2], t[3]]);
        let current = self.epoch(now);
        if epoch != current && epoch.wrapping_add(1) != current {
            return false;
        }
        // Constant-time comparison: the MAC is the secret-dependent part.
        let mac = self.mac(epoch, addr);
        mac.iter().zip(&t[4..]).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

/// How a server or router treats requests from addresses it has not validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationConfig {
    /// Answer a request without a valid `ADDRESS_TOKEN` with a Retry (a token) instead of
    /// the content. Off: every request is answered in full (a network without spoofers, such
    /// as a simulation).
    pub enabled: bool,
    /// The key tokens are derived from. The default is all zeros — anyone could mint tokens:
    /// set a random secret (the `rdtp` runtime draws one from the OS at start).
    pub secret: [u8; 32],
    /// Key rotation period: a token is valid for one to two periods.
    pub period: Duration,
    /// Most bytes sent toward an unvalidated address per byte it sent (RFC 9000 §8: 3).
    pub amplification: usize,
}

impl Default for ValidationConfig {
    fn default() -> Self {
        ValidationConfig { enabled: true, secret: [0; 32], period: Duration::from_secs(3600), amplification: 3 }
    }
}

/// Address validation as servers and routers apply it to the requests they answer.
#[derive(Clone, Debug)]
pub struct Validator {
    cfg: ValidationConfig,
    keys: TokenKeys,
}

impl Validator {
    pub fn new(cfg: ValidationConfig) -> Self {
        Validator { keys: TokenKeys::new(cfg.secret, cfg.period), cfg }
    }

    pub fn config(&self) -> &ValidationConfig {
        &self.cfg
    }

    /// Whether a request from `from` carrying `token` may be answered in full: the token
    /// was issued to `from`, port included.
    pub fn is_valid(&mut self, now: Time, from: SocketAddr, token: Option<&[u8]>) -> bool {
        !self.cfg.enabled || token.is_some_and(|t| self.keys.validate(now, from, t))
    }

    /// A token for `from` (its IP address and port).
    pub fn issue(&mut self, now: Time, from: SocketAddr) -> [u8; TOKEN_LEN] {
        self.keys.issue(now, from)
    }

    /// Most bytes to send toward an unvalidated address that sent `received` bytes.
    pub fn budget(&self, received: usize) -> usize {
        received.saturating_mul(self.cfg.amplification)
    }

    /// How to answer a request of `received` bytes from `from` that does not decode but
    /// whose tag could be read ([`crate::wire::attribute`]; issue 23, item 12), when the
    /// Nack `Malformed` echoing it would be `nack_len` bytes: the Nack if `from` is
    /// validated (`token`) or the Nack fits its budget; else a Retry, if that fits, so the
    /// sender's next attempt (with the token) gets the Nack; else nothing.
    pub fn answer_malformed(
        &mut self,
        now: Time,
        from: SocketAddr,
        token: Option<&[u8]>,
        received: usize,
        nack_len: usize,
    ) -> MalformedAnswer {
        let budget = self.budget(received);
        if nack_len <= budget || self.is_valid(now, from, token) {
            MalformedAnswer::Nack
        } else if crate::wire::RETRY_HEADER_LEN + TOKEN_LEN <= budget {
            MalformedAnswer::Retry(self.issue(now, from))
        } else {
            MalformedAnswer::Nothing
        }
    }
}

/// [`Validator::answer_malformed`]'s decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MalformedAnswer {
    /// A Nack `Malformed` with the request's tag (and EID and range, as far as readable).
    Nack,
    /// A Retry with the request's tag and this token for its source.
    Retry([u8; TOKEN_LEN]),
    /// Nothing: not even a Retry fits three times the datagram.
    Nothing,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_bind_the_address_and_expire_after_two_periods() {
        let mut k = TokenKeys::new([7; 32], Duration::from_secs(60));
        let a: SocketAddr = "192.0.2.1:4000".parse().unwrap();
        let b: SocketAddr = "192.0.2.2:4000".parse().unwrap();
        let t = k.issue(Time::from_millis(10_000), a);
        assert!(k.validate(Time::from_millis(10_000), a, &t));
        assert!(!k.validate(Time::from_millis(10_000), b, &t), "another address");
        // Issue 23: another port of the same host is another address.
        let a_other_port: SocketAddr = "192.0.2.1:4001".parse().unwrap();
        assert!(!k.validate(Time::from_millis(10_000), a_other_port, &t), "another port");
        assert!(k.validate(Time::from_millis(119_999), a, &t), "next epoch");
        assert!(!k.validate(Time::from_millis(120_000), a, &t), "two epochs later");
        let mut forged = t;
        forged[10] ^= 1;
        assert!(!k.validate(Time::from_millis(10_000), a, &forged));
        assert!(!k.validate(Time::from_millis(10_000), a, &t[..19]));
        // Another secret (a restarted node) does not accept it.
        let mut other = TokenKeys::new([8; 32], Duration::from_secs(60));
        assert!(!other.validate(Time::from_millis(10_000), a, &t));
        // IPv4 and its mapped IPv6 form are the same address.
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:4000".parse().unwrap();
        assert!(k.validate(Time::from_millis(10_000), mapped, &t));
    }
}
