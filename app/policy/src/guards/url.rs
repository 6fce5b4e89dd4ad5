//! URL / SSRF guard.
//!
//! The URL is parsed by the WHATWG parser (`url` crate), which turns `2130706433`,
//! `0x7f.1`, `0177.0.0.1`, `127.1` and percent-encoded or trailing-dot hosts into the
//! IPv4 address they mean, so the check runs on the address, never on the spelling.
//! IPv6 addresses that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are
//! judged by that address. Names are matched after IDNA mapping and folding a trailing dot.
//!
//! A name can stand for an internal address without any lookup: wildcard-DNS services
//! (`10.0.0.1.nip.io`), an address written into the labels under any domain (dotted,
//! dashed, hex, IPv6 with dashes), a `localhost` label, a single label completed by search
//! domains, or a site/cluster-internal suffix. These are denied before the allow-list. So
//! are spellings other parsers split differently (backslashes, `@` before the path,
//! missing `//`, percent-encoded hosts, invisible characters).
//!
//! What this guard cannot do alone: stop DNS rebinding. With `resolve = true` the
//! decision carries the normalised URL, its port and the addresses it judged; the executor
//! must connect to those (pin them), not resolve the name again.
//!
//! Over 500 lines: host parsing in every encoding browsers and resolvers accept (octal,
//! hex, dotless, IPv4-mapped IPv6) must sit next to the address classes it is judged by.

use crate::config::UrlGuardConfig;
use crate::host::Host;
use ipnet::{Ipv4Net, Ipv6Net};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;
use url::{Host as UrlHost, Url};

pub const MAX_URL: usize = 8192;

/// IPv4 ranges that are never a public destination (IANA special-purpose registry,
/// RFC 6890, plus CGNAT RFC 6598 and the multicast / reserved blocks).
static DENIED_V4: LazyLock<Vec<(Ipv4Net, &'static str)>> = LazyLock::new(|| {
    [
        ("0.0.0.0/8", "unspecified (this network)"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT (shared)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (cloud metadata)"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.31.196.0/24", "AS112"),
        ("192.52.193.0/24", "AMT"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("192.175.48.0/24", "AS112"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved / broadcast"),
    ]
    .into_iter()
    .map(|(n, why)| (n.parse().expect("static range"), why))
    .collect()
});

static DENIED_V6: LazyLock<Vec<(Ipv6Net, &'static str)>> = LazyLock::new(|| {
    [
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments (incl. Teredo)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "segment routing"),
        ("fc00::/7", "unique local (private)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    ]
    .into_iter()
    .map(|(n, why)| (n.parse().expect("static range"), why))
    .collect()
});

/// Names that always mean this machine or a cloud metadata service.
const BUILTIN_DENIED_HOSTS: &[&str] = &[
    "localhost",
    "*.localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.tencentyun.com",
    "metadata.packet.net",
    "metadata.platformequinix.com",
    "kubernetes.default",
];

/// Home-router admin names: the router answers them with its LAN address.
const ROUTER_HOSTS: &[&str] = &[
    "fritz.box",
    "*.fritz.box",
    "router.asus.com",
    "routerlogin.net",
    "routerlogin.com",
    "tplinkwifi.net",
    "tplinklogin.net",
    "mywifiext.net",
    "speedport.ip",
];

/// Suffixes that only resolve inside a site, a cluster or a special resolver (RFC 6761
/// special-use names, RFC 8375 `home.arpa`, common private TLDs, Kubernetes and Consul),
/// so a name under them is an internal host, never a public page.
const BUILTIN_DENIED_SUFFIXES: &[&str] = &[
    "localhost",
    "local",
    "localdomain",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "private",
    "test",
    "invalid",
    "onion",
    "alt",
    "arpa",
    "svc",
    "consul",
];

/// Public wildcard-DNS services whose names resolve to loopback or to an address written
/// in the name (`10.0.0.1.nip.io`): the name is an address in disguise. The apex and every
/// name under it are denied; the embedded-address rule catches services not listed here.
const ADDRESS_DNS_SERVICES: &[&str] = &[
    "nip.io",
    "sslip.io",
    "xip.io",
    "xip.name",
    "nip.direct",
    "traefik.me",
    "backname.io",
    "localtest.me",
    "lvh.me",
    "vcap.me",
    "fuf.me",
    "lacolhost.com",
    "localho.st",
    "localh.st",
    "local.gd",
    "smackaho.st",
    "ulh.us",
    "ratchetlocal.com",
    "yoogle.com",
    "1u.ms",
    "rbndr.us",
];

/// Labels that name this machine wherever they stand (`localhost.attacker.com` resolves to
/// 127.0.0.1 on many resolvers and reads as "local" to a reviewer).
const LOOPBACK_LABELS: &[&str] = &["localhost", "ip6-localhost", "ip6-loopback"];

/// Invisible characters (zero-width, joiners, bidi controls, soft hyphen, variation
/// selectors, BOM): IDNA drops some of them, so `loc\u{AD}alhost` would become `localhost`.
fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
        | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        | 0xE0000..=0xE0FFF)
}

/// Why an address is not a public destination, or `None` when it is.
pub fn denied_ip(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => denied_v4(v4),
        IpAddr::V6(v6) => denied_v6(v6),
    }
}

fn denied_v4(ip: Ipv4Addr) -> Option<&'static str> {
    DENIED_V4.iter().find(|(n, _)| n.contains(&ip)).map(|(_, why)| *why)
}

fn denied_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return denied_v4(v4);
    }
    DENIED_V6.iter().find(|(n, _)| n.contains(&ip)).map(|(_, why)| *why)
}

/// The IPv4 address inside IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96),
/// NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if s[..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || (s[5] == 0 && (s[6] != 0 || s[7] > 1))) {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

/// An internal address written into the labels of a name, the way wildcard-DNS services
/// read it: dotted (`10.0.0.1.example.com`), dashed (`app-127-0-0-1.example`), hex
/// (`7f000001.example`, `0x0a000001.example`) or IPv6 with dashes for colons (`--1.example`,
/// `fe80--1.example`). Only an address `denied_ip` refuses counts, so public addresses in
/// names (`93-184-215-14.isp.example`) still pass.
fn embedded_internal(name: &str) -> Option<(IpAddr, &'static str)> {
    let v4 = |ip: Ipv4Addr| denied_v4(ip).map(|why| (IpAddr::V4(ip), why));
    let labels: Vec<&str> = name.split('.').collect();
    for w in labels.windows(4) {
        // The outer labels may carry a word (`app-10.0.0.1.example`, `10.0.0.1-app.example`).
        let first = w[0].rsplit('-').next().unwrap_or(w[0]);
        let last = w[3].split('-').next().unwrap_or(w[3]);
        if let Some(hit) = v4_from_parts(&[first, w[1], w[2], last]).and_then(v4) {
            return Some(hit);
        }
    }
    for label in &labels {
        let tokens: Vec<&str> = label.split('-').collect();
        for w in tokens.windows(4) {
            if let Some(hit) = v4_from_parts(w).and_then(v4) {
                return Some(hit);
            }
        }
        for t in &tokens {
            if let Some(hit) = v4_from_hex(t).and_then(v4) {
                return Some(hit);
            }
        }
        if let Some(hit) = v6_from_dashes(label) {
            return Some(hit);
        }
    }
    None
}

fn octet(s: &str) -> Option<u8> {
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn v4_from_parts(p: &[&str]) -> Option<Ipv4Addr> {
    Some(Ipv4Addr::new(octet(p[0])?, octet(p[1])?, octet(p[2])?, octet(p[3])?))
}

/// Eight hex digits are the four bytes of an address (sslip.io, rbndr.us).
fn v4_from_hex(t: &str) -> Option<Ipv4Addr> {
    let t = t.strip_prefix("0x").unwrap_or(t);
    if t.len() != 8 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(t, 16).ok().map(Ipv4Addr::from)
}

/// sslip.io writes IPv6 with `-` for `:` (`--1` is `::1`), optionally after a word
/// (`app--1`). Tails are tried only after a prefix that cannot be part of an address, so
/// the tail `--1111` of the public `2606-4700--1111` is not read on its own.
fn v6_from_dashes(label: &str) -> Option<(IpAddr, &'static str)> {
    // Punycode labels start with `xn--`; their tails are not addresses.
    if label.starts_with("xn--") || !(label.contains("--") || label.matches('-').count() >= 7) {
        return None;
    }
    let b = label.as_bytes();
    (0..b.len())
        .filter(|&i| {
            i == 0
                || ((b[i] == b'-' || b[i - 1] == b'-') && b[..i].iter().any(|c| *c != b'-' && !c.is_ascii_hexdigit()))
        })
        .map(|i| &label[i..])
        .filter(|t| t.contains('-') && t.bytes().any(|c| c.is_ascii_hexdigit()))
        .filter(|t| t.bytes().all(|c| c == b'-' || c.is_ascii_hexdigit()))
        .filter_map(|t| t.replace('-', ":").parse::<Ipv6Addr>().ok())
        // `::2`…`::ff:ffff` would be "IPv4-compatible" 0.x.x.x, which nothing routes; skipping
        // them keeps names like `app--1234` usable. `::` and `::1` are still caught.
        .filter(|ip| {
            let s = ip.segments();
            !(s[..6] == [0; 6] && s[6] < 0x100 && (s[6] != 0 || s[7] > 1))
        })
        .find_map(|ip| denied_v6(ip).map(|why| (IpAddr::V6(ip), why)))
}

#[derive(Debug, Clone)]
enum HostPattern {
    Exact(String),
    Suffix(String), // ".example.com"
}

impl HostPattern {
    fn parse(s: &str) -> Result<HostPattern, String> {
        let s = s.trim().trim_end_matches('.').to_ascii_lowercase();
        if s.is_empty() {
            return Err("empty host pattern".into());
        }
        if let Some(rest) = s.strip_prefix("*.") {
            if rest.is_empty() || rest.contains('*') {
                return Err(format!("bad host pattern {s:?}"));
            }
            Ok(HostPattern::Suffix(format!(".{rest}")))
        } else if s.contains('*') {
            Err(format!("bad host pattern {s:?}: only a leading `*.` is allowed"))
        } else {
            Ok(HostPattern::Exact(s))
        }
    }
    fn display(&self) -> String {
        match self {
            HostPattern::Exact(e) => e.clone(),
            HostPattern::Suffix(s) => format!("*{s}"),
        }
    }
    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(e) => host == e,
            HostPattern::Suffix(suf) => host.ends_with(suf.as_str()),
        }
    }
}

#[derive(Debug, Clone)]
pub struct UrlGuard {
    pub name: String,
    schemes: Vec<String>,
    deny_hosts: Vec<HostPattern>,
    allow_hosts: Vec<HostPattern>,
    ports: Vec<u16>,
    resolve: bool,
}

/// A URL that passed, with the addresses the executor must use when it resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    /// The WHATWG serialisation: what the executor must fetch, byte for byte.
    pub url: String,
    pub host: String,
    /// The explicit port or the scheme's default.
    pub port: u16,
    pub pinned: Vec<IpAddr>,
}

/// Built-in name denials with the reason each states.
static BUILTIN: LazyLock<Vec<(HostPattern, &'static str)>> = LazyLock::new(|| {
    let pat = |s: String| HostPattern::parse(&s).expect("static pattern");
    let mut v = Vec::new();
    for h in BUILTIN_DENIED_HOSTS {
        v.push((pat(h.to_string()), "names this machine or a cloud metadata service"));
    }
    for h in ROUTER_HOSTS {
        v.push((pat(h.to_string()), "names a home router (answered with a LAN address)"));
    }
    for s in BUILTIN_DENIED_SUFFIXES {
        v.push((pat(format!("*.{s}")), "is a site- or cluster-internal name"));
    }
    for s in ADDRESS_DNS_SERVICES {
        let why = "is a wildcard-DNS service that resolves to loopback or to an address in the name";
        v.push((pat(s.to_string()), why));
        v.push((pat(format!("*.{s}")), why));
    }
    v
});

impl UrlGuard {
    pub fn new(name: &str, c: &UrlGuardConfig) -> Result<UrlGuard, String> {
        let mut schemes = Vec::new();
        for s in &c.schemes {
            let s = s.to_ascii_lowercase();
            if s != "http" && s != "https" {
                return Err(format!("scheme {s:?} is not supported; use http and/or https"));
            }
            schemes.push(s);
        }
        if schemes.is_empty() {
            return Err("schemes must not be empty".into());
        }
        let mut deny_hosts = Vec::new();
        for h in &c.deny_hosts {
            deny_hosts.push(HostPattern::parse(h)?);
        }
        let allow_hosts = c
            .allow_hosts
            .iter()
            .map(|h| HostPattern::parse(h))
            .collect::<Result<_, _>>()?;
        Ok(UrlGuard {
            name: name.to_string(),
            schemes,
            deny_hosts,
            allow_hosts,
            ports: c.ports.clone(),
            resolve: c.resolve,
        })
    }

    pub fn check(&self, raw: &str, host: &dyn Host) -> Result<CheckedUrl, String> {
        if raw.len() > MAX_URL {
            return Err(format!("URL longer than {MAX_URL} bytes"));
        }
        // The WHATWG parser silently drops tabs/newlines and trims spaces, and IDNA drops
        // some invisible characters; refuse them instead, so what a reviewer reads is
        // exactly what is fetched.
        if let Some(c) = raw.chars().find(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!(
                "URL contains whitespace or control character U+{:04X}",
                c as u32
            ));
        }
        if let Some(c) = raw.chars().find(|&c| is_invisible(c)) {
            return Err(format!("URL contains invisible character U+{:04X}", c as u32));
        }
        let url = Url::parse(raw).map_err(|e| format!("not a valid absolute URL: {e}"))?;
        if !self.schemes.iter().any(|s| s == url.scheme()) {
            return Err(format!(
                "scheme {:?} is not allowed (allowed: {})",
                url.scheme(),
                self.schemes.join(", ")
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("credentials in URLs are not allowed".into());
        }
        ambiguous_authority(raw, url.scheme())?;
        let port = url.port_or_known_default().unwrap_or(0);
        if port == 0 {
            // Port 0 means "any port" to some socket APIs and is never a real service.
            return Err("port 0 is not allowed".into());
        }
        if !self.ports.is_empty() && !self.ports.contains(&port) {
            return Err(format!("port {port} is not allowed"));
        }
        let checked = |host: String, pinned: Vec<IpAddr>| CheckedUrl {
            url: url.as_str().to_string(),
            host,
            port,
            pinned,
        };
        match url.host() {
            None => Err("URL has no host".into()),
            Some(UrlHost::Ipv4(ip)) => self
                .check_ip_host(IpAddr::V4(ip))
                .map(|ip| checked(ip.to_string(), vec![ip])),
            Some(UrlHost::Ipv6(ip)) => self
                .check_ip_host(IpAddr::V6(ip))
                .map(|ip| checked(ip.to_string(), vec![ip])),
            Some(UrlHost::Domain(d)) => {
                let name = self.check_name(d)?;
                let mut pinned = Vec::new();
                if self.resolve {
                    let addrs = host
                        .resolve_host(&name, port)
                        .ok_or_else(|| format!("host {name} does not resolve"))?;
                    for ip in &addrs {
                        if let Some(why) = denied_ip(*ip) {
                            return Err(format!("host {name} resolves to {ip}, a {why} address"));
                        }
                    }
                    pinned = addrs;
                }
                Ok(checked(name, pinned))
            }
        }
    }

    /// Judges a host name (already IDNA-mapped and lower-cased by the parser, so full-width
    /// letters and ideographic dots arrive as ASCII) and returns it without a trailing dot.
    /// The built-in rules run before the allow-list, which cannot re-open them.
    fn check_name(&self, d: &str) -> Result<String, String> {
        let name = d.strip_suffix('.').unwrap_or(d).to_ascii_lowercase();
        if name.is_empty() {
            return Err("URL has an empty host".into());
        }
        // WHATWG lets `;`, `&`, `*`, `!`… into a domain; DNS names have letters, digits, `-`
        // (and `_` in some records). Other clients cut such a host short or reject it.
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        {
            return Err(format!(
                "host {name:?} has the character {c:?}, not valid in a DNS name"
            ));
        }
        if name.split('.').any(str::is_empty) {
            return Err(format!("host {d:?} has an empty label"));
        }
        // A name without a dot is completed by the resolver's search domains: `db`,
        // `redis`, `metadata` reach internal hosts.
        if !name.contains('.') {
            return Err(format!(
                "host {name} is a single-label name (resolved via local search domains)"
            ));
        }
        if let Some((p, why)) = BUILTIN.iter().find(|(p, _)| p.matches(&name)) {
            return Err(format!("host {name} {why} ({})", p.display()));
        }
        if let Some(l) = name.split('.').find(|l| LOOPBACK_LABELS.contains(l)) {
            return Err(format!("host {name} has the label {l:?}, a name for this machine"));
        }
        if let Some((ip, why)) = embedded_internal(&name) {
            return Err(format!("host {name} embeds {ip}, a {why} address"));
        }
        if let Some(p) = self.deny_hosts.iter().find(|p| p.matches(&name)) {
            return Err(format!("host {name} is denied ({})", p.display()));
        }
        if !self.allow_hosts.is_empty() && !self.allow_hosts.iter().any(|p| p.matches(&name)) {
            return Err(format!("host {name} is not on the allowed list of {}", self.name));
        }
        Ok(name)
    }

    fn check_ip_host(&self, ip: IpAddr) -> Result<IpAddr, String> {
        if let Some(why) = denied_ip(ip) {
            return Err(format!("address {ip} is a {why} address"));
        }
        if !self.allow_hosts.is_empty() {
            return Err(format!("address {ip} is not on the allowed list of {}", self.name));
        }
        Ok(ip)
    }
}

/// Refuses spellings that other URL parsers (HTTP clients, proxies, browsers' older
/// engines) split differently from WHATWG, so the executor cannot end up at another host
/// than the one judged: anything but exactly `scheme://` (`http:\\h`, `http:/h`,
/// `http:h`, `http:///h`), a backslash anywhere, an `@` before the first `/` after the
/// authority (`http://evil.com#@127.0.0.1`, `http://a@b@c`), and percent-escapes in the host.
fn ambiguous_authority(raw: &str, scheme: &str) -> Result<(), String> {
    if raw.contains('\\') {
        return Err("URL contains a backslash (parsers disagree on where the host ends)".into());
    }
    let rest = raw.get(scheme.len() + 1..).unwrap_or("");
    let Some(after) = rest.strip_prefix("//").filter(|a| !a.starts_with('/')) else {
        return Err(format!("URL must start with {scheme}:// followed by the host"));
    };
    let before_path = after.split('/').next().unwrap_or("");
    if before_path.contains('@') {
        return Err("URL has an `@` before its path (parsers disagree on the host)".into());
    }
    let authority = before_path.split(['?', '#']).next().unwrap_or("");
    if authority.contains('%') {
        return Err("URL host is percent-encoded".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::PureHost;

    fn guard() -> UrlGuard {
        UrlGuard::new(
            "web",
            &UrlGuardConfig {
                schemes: vec!["http".into(), "https".into()],
                deny_hosts: vec!["*.internal".into(), "*.corp.example".into()],
                allow_hosts: vec![],
                ports: vec![],
                resolve: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn public_urls_pass() {
        let g = guard();
        for u in [
            "https://example.com/",
            "http://example.com:8080/path?q=1#frag",
            "https://EXAMPLE.com./x",
            "https://93.184.215.14/",
            "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/",
            "https://xn--bcher-kva.example/",
            "https://8.8.8.8/dns",
            "https://[::ffff:8.8.8.8]/",
            "https://[64:ff9b::808:808]/",
            "https://internal.example.com/",
        ] {
            assert!(g.check(u, &PureHost).is_ok(), "{u}: {:?}", g.check(u, &PureHost));
        }
    }

    #[test]
    fn ssrf_encodings_of_internal_addresses_are_denied() {
        let g = guard();
        for u in [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0x7f.0.0.1/",
            "http://0177.0.0.1/",
            "http://017700000001/",
            "http://127.000.000.001/",
            "http://%31%32%37.0.0.1/",
            "http://127.0.0.1.:80/",
            "http://0/",
            "http://0.0.0.0:8000/",
            "http://[::]/",
            "http://[::1]/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:7f00:1::]/",
            "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
            "http://10.0.0.5/",
            "http://172.16.3.4/",
            "http://172.31.255.255/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://100.64.0.1/",
            "http://[fe80::1]/",
            "http://[fc00::1]/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://240.0.0.1/",
            "http://198.18.0.1/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://app.localhost/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/",
            "http://db.internal/",
            "http://wiki.corp.example/",
        ] {
            assert!(g.check(u, &PureHost).is_err(), "{u} passed");
        }
    }

    #[test]
    fn schemes_credentials_and_malformed_urls_are_denied_with_reasons() {
        let g = guard();
        for (u, needle) in [
            ("file:///etc/passwd", "scheme"),
            ("gopher://example.com/", "scheme"),
            ("ftp://example.com/", "scheme"),
            ("javascript:alert(1)", "scheme"),
            ("data:text/plain,hi", "scheme"),
            ("https://user:pass@example.com/", "credentials"),
            ("https://user@example.com/", "credentials"),
            ("https://example.com@127.0.0.1/", "credentials"),
            ("//example.com/", "valid absolute URL"),
            ("/relative", "valid absolute URL"),
            ("https://exa mple.com/", "whitespace"),
            ("https://example.com/\n", "whitespace"),
            ("\thttp://127.0.0.1", "whitespace"),
            ("http://[::1", "valid absolute URL"),
            ("http://", "valid absolute URL"),
        ] {
            let e = g.check(u, &PureHost).unwrap_err();
            assert!(e.contains(needle), "{u}: {e}");
        }
    }

    #[test]
    fn allow_lists_and_ports_restrict_further() {
        let g = UrlGuard::new(
            "api",
            &UrlGuardConfig {
                schemes: vec!["https".into()],
                deny_hosts: vec![],
                allow_hosts: vec!["api.example.com".into(), "*.cdn.example".into()],
                ports: vec![443],
                resolve: false,
            },
        )
        .unwrap();
        assert!(g.check("https://api.example.com/v1", &PureHost).is_ok());
        assert!(g.check("https://img.cdn.example/x.png", &PureHost).is_ok());
        assert!(g.check("https://cdn.example/x.png", &PureHost).is_err());
        assert!(g.check("https://evil.com/", &PureHost).is_err());
        assert!(g
            .check("https://api.example.com:8443/", &PureHost)
            .unwrap_err()
            .contains("port"));
        assert!(g
            .check("http://api.example.com/", &PureHost)
            .unwrap_err()
            .contains("scheme"));
        assert!(g
            .check("https://8.8.8.8/", &PureHost)
            .unwrap_err()
            .contains("allowed list"));
    }

    struct FakeDns(Vec<IpAddr>);
    impl Host for FakeDns {
        fn resolve_path(&self, _: &std::path::Path) -> Option<std::path::PathBuf> {
            None
        }
        fn tree_stats(&self, _: &std::path::Path, _: u64) -> Option<crate::host::TreeStats> {
            None
        }
        fn resolve_host(&self, _: &str, _: u16) -> Option<Vec<IpAddr>> {
            (!self.0.is_empty()).then(|| self.0.clone())
        }
    }

    #[test]
    fn resolution_judges_every_address_and_pins_them() {
        let mut c = UrlGuardConfig {
            schemes: vec!["https".into()],
            deny_hosts: vec![],
            allow_hosts: vec![],
            ports: vec![],
            resolve: true,
        };
        let g = UrlGuard::new("r", &c).unwrap();
        let public: IpAddr = "93.184.215.14".parse().unwrap();
        let private: IpAddr = "10.1.2.3".parse().unwrap();
        let ok = g.check("https://example.com/", &FakeDns(vec![public])).unwrap();
        assert_eq!(ok.pinned, vec![public]);
        assert_eq!((ok.url.as_str(), ok.port), ("https://example.com/", 443));
        let e = g
            .check("https://rebind.example/", &FakeDns(vec![public, private]))
            .unwrap_err();
        assert!(e.contains("10.1.2.3"), "{e}");
        assert!(g
            .check("https://nx.example/", &FakeDns(vec![]))
            .unwrap_err()
            .contains("does not resolve"));
        c.resolve = false;
        assert!(UrlGuard::new("r", &c)
            .unwrap()
            .check("https://nx.example/", &FakeDns(vec![]))
            .is_ok());
    }

    /// Every row is denied, and by the rule named in its second column.
    fn denied_with(g: &UrlGuard, rows: &[(&str, &str)]) {
        for (u, needle) in rows {
            match g.check(u, &PureHost) {
                Ok(c) => panic!("{u:?} passed as {c:?}"),
                Err(e) => assert!(e.contains(needle), "{u:?}: {e}"),
            }
        }
    }

    #[test]
    fn public_sites_still_pass() {
        let g = guard();
        for u in [
            "https://example.com",
            "https://docs.rs/serde",
            "https://api.github.com/x",
            "https://en.wikipedia.org/wiki/Rust",
            "http://1.1.1.1/",
            "https://sub.domain.co.uk:8443/p?q=1#f",
            "https://münchen.de",
            "https://xn--mnchen-3ya.de/",
            "https://medium.com/@user/post",
            "https://www.npmjs.com/package/@scope/pkg",
            "https://example.com/?q=a%20b",
            "https://example.com/a%2Fb#x@y",
            "https://ec2-3-80-1-1.compute-1.amazonaws.com/",
            "https://8.8.8.8.example.com/",
            "https://08080808.example.com/",
            "https://deadbeef.example.com/",
            "https://2606-4700--1111.example.com/",
            "https://app--1234.example.com/",
            "https://xn--fde.example.com/",
            "https://a-b-c-d.example.com/",
            "https://build-1234-5.ci.example.com/",
            "https://localhostr.com/",
            "https://EXAMPLE.com./x",
        ] {
            assert!(g.check(u, &PureHost).is_ok(), "{u}: {:?}", g.check(u, &PureHost));
        }
    }

    #[test]
    fn wildcard_dns_services_are_denied() {
        let w = "wildcard-DNS service";
        denied_with(
            &guard(),
            &[
                ("http://nip.io/", w),
                ("http://93.184.215.14.nip.io/", w),
                ("http://app.sslip.io/", w),
                ("http://foo.xip.io/", w),
                ("http://foo.xip.name/", w),
                ("http://app.traefik.me/", w),
                ("http://localtest.me/", w),
                ("http://readme.localtest.me/", w),
                ("http://lvh.me:3000/", w),
                ("http://app.lvh.me/", w),
                ("http://vcap.me/", w),
                ("http://lacolhost.com/", w),
                ("http://www.fuf.me/", w),
                ("http://x.nip.direct/", w),
                ("http://x.backname.io/", w),
                ("http://localho.st/", w),
                ("http://smackaho.st/", w),
                ("http://local.gd/", w),
                ("http://yoogle.com/", w),
                ("http://make-1.2.3.4-rebind-127.0.0.1-rr.1u.ms/", w),
                ("http://7f000001.c0a80001.rbndr.us/", w),
                ("http://APP.NIP.IO./", w),
                ("http://fritz.box/", "router"),
                ("http://router.asus.com/", "router"),
            ],
        );
    }

    #[test]
    fn names_embedding_internal_addresses_are_denied() {
        let e = "embeds";
        denied_with(
            &guard(),
            &[
                ("http://10.0.0.1.example.com/", e),
                ("http://app.127.0.0.1.something.net/", e),
                ("http://169.254.169.254.attacker.net/latest/meta-data/", e),
                ("http://x.192.168.1.1.evil.org/", e),
                ("http://127-0-0-1.foo.com/", e),
                ("http://10-0-0-1-foo.bar.com/", e),
                ("http://app-172-16-0-1.evil.net/", e),
                ("http://127-0-0-1.org.uk/", e),
                ("http://100-64-0-1.evil.net/", e),
                ("http://7f000001.foo.com/", e),
                ("http://0x7f000001.foo.com/", e),
                ("http://a9fea9fe.evil.net/", e),
                ("http://app-c0a80101.evil.net/", e),
                ("http://00000000.evil.net/", e),
                ("http://--1.evil.net/", e),
                ("http://0--1.foo.com/", e),
                ("http://app--1.evil.net/", e),
                ("http://fe80--1.evil.net/", e),
                ("http://fd00--1.evil.net/", e),
                ("http://0-0-0-0-0-0-0-1.evil.net/", e),
                ("http://--ffff-7f00-1.evil.net/", e),
                ("http://app-10.0.0.1.evil.net/", e),
                ("http://10.0.0.1-app.evil.net/", e),
                ("http://ip-10-0-0-1.ec2.example.com/", e),
            ],
        );
    }

    #[test]
    fn loopback_names_are_denied() {
        denied_with(
            &guard(),
            &[
                ("http://localhost.attacker.com/", "label \"localhost\""),
                ("http://app.localhost.evil.net/", "label \"localhost\""),
                ("http://ip6-localhost.evil.net/", "label \"ip6-localhost\""),
                ("http://LocalHost.Evil.Net./", "label \"localhost\""),
                // IDNA maps full-width letters and ideographic dots to ASCII.
                ("http://ｌｏｃａｌｈｏｓｔ/", "localhost"),
                ("http://ｌｏｃａｌｈｏｓｔ。evil。net/", "label \"localhost\""),
                ("http://localhost．evil｡net/", "label \"localhost\""),
                ("http://１２７。０。０。１/", "loopback"),
                ("http://x.localhost./", "this machine"),
            ],
        );
    }

    #[test]
    fn single_label_names_are_denied() {
        let s = "single-label";
        denied_with(
            &guard(),
            &[
                ("http://intranet/", s),
                ("http://db:5432/", s),
                ("http://redis/", s),
                ("http://jenkins:8080/job/x", s),
                ("http://intranet./", s),
                ("http://xn--mnchen-3ya/", s),
                ("http://instance-data/", s),
            ],
        );
        // A trailing dot is folded once; more dots leave an empty label.
        denied_with(
            &guard(),
            &[
                ("http://example.com../", "empty label"),
                ("http://a..example.com/", "empty label"),
            ],
        );
    }

    #[test]
    fn internal_suffixes_are_denied() {
        let i = "internal name";
        denied_with(
            &guard(),
            &[
                ("http://api.default.svc/", i),
                ("http://api.default.svc.cluster.local/", i),
                ("http://printer.local/", i),
                ("http://x.localdomain/", i),
                ("http://nas.home.arpa/", i),
                ("http://1.0.0.127.in-addr.arpa/", i),
                ("http://b.ip6.arpa/", i),
                ("http://router.lan/", i),
                ("http://wiki.intranet/", i),
                ("http://git.corp/", i),
                ("http://vault.private/", i),
                ("http://nas.home/", i),
                ("http://app.test/", i),
                ("http://a.invalid/", i),
                (
                    "http://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/",
                    i,
                ),
                ("http://web.service.consul/", i),
                ("http://host.docker.internal:2375/", i),
                ("http://x.alt/", i),
                ("http://kubernetes.default/", "metadata"),
                ("http://metadata.tencentyun.com/latest/meta-data/", "metadata"),
            ],
        );
    }

    #[test]
    fn urls_parsers_read_differently_are_denied() {
        denied_with(
            &guard(),
            &[
                ("http://evil.com\\@127.0.0.1/", "backslash"),
                ("http:\\\\127.0.0.1/", "backslash"),
                ("http:/\\127.0.0.1/", "backslash"),
                ("https://example.com\\.evil.net/", "backslash"),
                ("http://127.0.0.1:80@evil.com/", "credentials"),
                ("http://a@b@c.com/", "credentials"),
                ("http://@evil.com/", "`@`"),
                ("http://:@evil.com/", "`@`"),
                ("http://127.0.0.1;evil.com/", "not valid in a DNS name"),
                ("http://127.0.0.1&evil.com/", "not valid in a DNS name"),
                ("http://evil.com!.example/", "not valid in a DNS name"),
                ("http://evil.com#@127.0.0.1", "`@`"),
                ("http://evil.com?@127.0.0.1/", "`@`"),
                ("http://evil.com:80#@127.0.0.1/", "`@`"),
                ("http:evil.com/", "http://"),
                ("http:/evil.com/", "http://"),
                ("http:///evil.com/", "http://"),
                ("https://%65xample.com/", "percent-encoded"),
                ("http://%6c%6f%63%61%6c%68%6f%73%74/", "percent-encoded"),
                ("http://example.com:0/", "port 0"),
                ("http://loc\u{200b}alhost/", "invisible"),
                ("http://loc\u{ad}alhost/", "invisible"),
                ("http://example.com\u{feff}/", "invisible"),
                ("http://\u{202e}moc.elpmaxe/", "invisible"),
                ("http://127.0.0.1\t", "whitespace"),
                ("http://loc\nalhost/", "whitespace"),
                ("http://127.0.0.1\r/", "whitespace"),
                ("http://127.0.0.1\u{7f}/", "control"),
                ("http://127.0.0.1\u{85}/", "control"),
                ("http://exa\u{3000}mple.com/", "whitespace"),
                ("http://[::ffff:127.0.0.1]/", "loopback"),
                ("http://0/", "unspecified"),
                ("http://0.0.0.0/", "unspecified"),
            ],
        );
    }

    #[test]
    fn allow_lists_cannot_reopen_built_in_denials() {
        let g = UrlGuard::new(
            "open",
            &UrlGuardConfig {
                schemes: vec!["http".into(), "https".into()],
                deny_hosts: vec![],
                allow_hosts: vec![
                    "*.nip.io".into(),
                    "localtest.me".into(),
                    "intranet".into(),
                    "*.internal".into(),
                    "*.example.com".into(),
                ],
                ports: vec![],
                resolve: false,
            },
        )
        .unwrap();
        for u in [
            "http://127.0.0.1.nip.io/",
            "http://localtest.me/",
            "http://intranet/",
            "http://db.internal/",
            "http://10-0-0-1.example.com/",
            "http://localhost.example.com/",
        ] {
            assert!(g.check(u, &PureHost).is_err(), "{u} passed");
        }
        assert!(g.check("https://docs.example.com/", &PureHost).is_ok());
    }

    #[test]
    fn checked_url_is_the_normalised_url_with_its_port() {
        let g = guard();
        let c = g.check("HTTPS://Example.COM:443/a/../b?x=1#f", &PureHost).unwrap();
        assert_eq!(c.url, "https://example.com/b?x=1#f");
        assert_eq!((c.host.as_str(), c.port), ("example.com", 443));
        let c = g.check("http://münchen.de:8080", &PureHost).unwrap();
        assert_eq!(c.url, "http://xn--mnchen-3ya.de:8080/");
        assert_eq!((c.host.as_str(), c.port), ("xn--mnchen-3ya.de", 8080));
        let c = g.check("http://0x08.8.8.8/", &PureHost).unwrap();
        assert_eq!(c.url, "http://8.8.8.8/");
        assert_eq!(c.pinned, vec![IpAddr::V4(Ipv4Addr::new(8, 8, 8, 8))]);
    }

    #[test]
    fn embedded_v4_extraction() {
        let p = |s: &str| s.parse::<Ipv6Addr>().unwrap();
        assert_eq!(embedded_v4(p("::ffff:1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("::1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("64:ff9b::1.2.3.4")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("2002:0102:0304::1")), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(embedded_v4(p("::1")), None);
        assert_eq!(embedded_v4(p("2606:4700::1")), None);
    }

    #[test]
    fn bad_guard_configuration_is_refused() {
        let c = |schemes: Vec<&str>, deny: Vec<&str>| UrlGuardConfig {
            schemes: schemes.into_iter().map(String::from).collect(),
            deny_hosts: deny.into_iter().map(String::from).collect(),
            allow_hosts: vec![],
            ports: vec![],
            resolve: false,
        };
        assert!(UrlGuard::new("x", &c(vec!["ftp"], vec![])).is_err());
        assert!(UrlGuard::new("x", &c(vec![], vec![])).is_err());
        assert!(UrlGuard::new("x", &c(vec!["https"], vec!["a.*.com"])).is_err());
    }
}
