use serde::{Deserialize, Serialize};

/// What a person may do. Stored as its lower-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Reviewer,
    Oncall,
    Auditor,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Admin, Role::Reviewer, Role::Oncall, Role::Auditor];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Reviewer => "reviewer",
            Role::Oncall => "oncall",
            Role::Auditor => "auditor",
        }
    }

    /// May decide held calls (auditors only look).
    pub fn can_decide(self) -> bool {
        self.may(Permission::Decide)
    }

    /// The one permission table: pages, server functions and the service layer all ask it.
    pub fn may(self, p: Permission) -> bool {
        use Permission::*;
        use Role::*;
        match p {
            ReadCalls | ReadStats => true,
            Decide => matches!(self, Reviewer | Oncall),
            RevealSecrets => matches!(self, Admin | Oncall),
            ReadAudit => matches!(self, Admin | Auditor),
            ManageUsers | ManageAgents => self == Admin,
            BreakGlass => self == Oncall,
            AcknowledgeOverrides => matches!(self, Admin | Reviewer | Oncall),
        }
    }
}

/// What a role may do (see [`Role::may`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// The queue, calls and grants.
    ReadCalls,
    /// Decide held calls and revoke grants.
    Decide,
    /// See a held call's arguments with nothing redacted (audited).
    RevealSecrets,
    /// The audit trail.
    ReadAudit,
    /// The stats page.
    ReadStats,
    /// People and roles (the admin page).
    ManageUsers,
    /// Agents and their signing secrets (the admin page).
    ManageAgents,
    /// Start a break-glass override and release held calls under it.
    BreakGlass,
    /// Agree with or flag another person's override (post-hoc review).
    AcknowledgeOverrides,
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown role {s:?}; use admin, reviewer, oncall or auditor"))
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A person as the browser may see them (never the password hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserView {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub disabled: bool,
    pub created_at: String,
}

/// An agent as the admin page shows it (never a secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentView {
    pub id: String,
    pub description: String,
    pub disabled: bool,
    pub created_at_ms: i64,
    /// Secrets it may sign with now, newest first: the current one (`retires_at_ms` none)
    /// and earlier ones still in their grace period.
    pub secrets: Vec<AgentSecretView>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSecretView {
    pub created_at_ms: i64,
    pub retires_at_ms: Option<i64>,
}

/// A signing secret just issued (an agent added or its secret rotated): shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedSecret {
    pub agent: String,
    pub secret: String,
    /// What happened, for the person (the earlier secret's grace, say).
    pub message: String,
}

/// Who is signed in, and the CSRF token forms must carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SessionInfo {
    pub user: Option<UserView>,
    pub csrf_token: String,
    /// May read the audit trail: the role's right, or reviewers by configuration.
    #[serde(default)]
    pub reads_audit: bool,
    /// Break-glass overrides in force when the page was rendered (the banner).
    #[serde(default)]
    pub break_glass: Vec<BreakGlassView>,
    /// The language pages are rendered in.
    #[serde(default)]
    pub locale: crate::i18n::Locale,
}

/// A break-glass override in force: who, why, and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakGlassView {
    pub id: String,
    /// `user:NAME`.
    pub user: String,
    pub justification: String,
    pub started_at_ms: i64,
    pub ends_at_ms: i64,
}

/// A call released under break-glass and its post-hoc review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideView {
    pub call_id: String,
    pub tool: String,
    pub agent: String,
    pub risk: String,
    /// `user:NAME` of the on-call person.
    pub by: String,
    pub at_ms: i64,
    pub justification: String,
    pub acknowledged_by: Option<String>,
    pub acknowledged_at_ms: Option<i64>,
    /// `agree` or `flag` once acknowledged.
    pub verdict: Option<String>,
    pub note: Option<String>,
}

/// A notification channel as the admin page shows it: where it sends by host or
/// recipients only (a Slack webhook URL is a credential), what it sends, how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelView {
    pub name: String,
    /// webhook, slack or email.
    pub kind: String,
    pub target: String,
    pub min_risk: String,
    /// Empty: every event.
    pub events: Vec<String>,
    /// Set in the configuration file (changed there, not on the page).
    pub from_config: bool,
    pub delivered: u64,
    pub failed: u64,
    pub last_at_ms: Option<i64>,
    pub last_error: Option<String>,
}

/// A channel as the admin page's form submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelInput {
    pub name: String,
    pub kind: String,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub secret: String,
    /// E-mail recipients, separated by commas or spaces.
    #[serde(default)]
    pub to: String,
    #[serde(default)]
    pub min_risk: String,
    /// Event names separated by commas; empty: every event.
    #[serde(default)]
    pub events: String,
}

/// What a decision link from a notification proposes, for its confirm page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkView {
    pub call_id: String,
    /// `approve` or `reject`.
    pub verdict: String,
    pub tool: String,
    pub agent: String,
    pub risk: String,
    pub reason: String,
    /// The call's status now (a link to a decided call decides nothing).
    pub status: String,
}

/// Overrides awaiting acknowledgement (oldest first) and the latest acknowledged ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverrideList {
    pub awaiting: Vec<OverrideView>,
    /// How many await acknowledgement in all (the list shows the oldest 200).
    pub awaiting_total: u64,
    pub acknowledged: Vec<OverrideView>,
    pub now_ms: i64,
}

/// Put into request extensions by the server's auth middleware.
#[derive(Debug, Clone, Default)]
pub struct RequestAuth {
    pub user: Option<UserView>,
    pub csrf_token: Option<String>,
    /// The language to render in (see [`crate::i18n`]).
    pub locale: crate::i18n::Locale,
}

/// The CSP nonce of this response (request extension set by the server).
#[derive(Debug, Clone)]
pub struct CspNonce(pub String);

/// Who decided, as people read it: `user:alice` → `alice`; lists (`user:a, user:b`) are
/// joined with "and"; `system` and other actors stay as they are.
pub fn who(by: &str) -> String {
    who_joined(by, " and ")
}

/// [`who`] with `and` between several names (`Tr::who` gives the reader's language's).
pub fn who_joined(by: &str, and: &str) -> String {
    by.split(", ")
        .map(|p| p.strip_prefix("user:").unwrap_or(p))
        .collect::<Vec<_>>()
        .join(and)
}

/// Form field and header that carry the CSRF token.
pub const CSRF_FIELD: &str = "csrf_token";
pub const CSRF_HEADER: &str = "x-csrf-token";

/// A held call as the queue shows it (also the payload of `call_pending` live events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueItem {
    pub id: String,
    pub agent: String,
    pub session_id: String,
    pub tool: String,
    pub server: Option<String>,
    /// low, medium, high or critical.
    pub risk: String,
    pub destructive: bool,
    /// The rule that held the call and the policy's reason.
    pub rule: Option<String>,
    pub reason: String,
    pub blocked_by: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub approvers_required: i64,
    /// Reviewers who approved so far (`user:NAME`), for calls that need several.
    #[serde(default)]
    pub approvals: Vec<String>,
    /// Unanswered past its escalation time: on-call was told.
    #[serde(default)]
    pub escalated: bool,
}

/// What the queue page asks for: filters, order and page. It lives in the page's URL
/// (`/queue?tool=…&sort=risk&page=2`), so a view can be shared and the back button works.
/// Empty strings mean "any".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueQuery {
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub agent: String,
    #[serde(default)]
    pub risk: String,
    #[serde(default)]
    pub session: String,
    /// `oldest` (default), `expiry` or `risk`.
    #[serde(default)]
    pub sort: String,
    /// Zero-based page of [`QUEUE_PAGE`] calls.
    #[serde(default)]
    pub page: u32,
}

/// Calls per queue page: a first screen renders fast however many are held.
pub const QUEUE_PAGE: u32 = 50;

impl QueueQuery {
    /// Whether a held call passes the filters (for calls that arrive live).
    pub fn matches(&self, item: &QueueItem) -> bool {
        self.matches_fields(&item.tool, &item.agent, &item.risk, Some(&item.session_id))
    }

    /// The filters over a call's fields; `session: None` leaves the session filter out
    /// (for counts grouped without sessions, which the server counts separately).
    pub fn matches_fields(&self, tool: &str, agent: &str, risk: &str, session: Option<&str>) -> bool {
        (self.tool.is_empty() || tool == self.tool)
            && (self.agent.is_empty() || agent == self.agent)
            && (self.risk.is_empty() || risk == self.risk)
            && (self.session.is_empty() || session.is_none_or(|s| s == self.session))
    }

    pub fn filtered(&self) -> bool {
        !(self.tool.is_empty() && self.agent.is_empty() && self.risk.is_empty() && self.session.is_empty())
    }

    /// The query string for this view (without `?`), empty values left out.
    pub fn to_query_string(&self) -> String {
        self.query_string(|k| k.to_string())
    }

    /// The `get_queue` server function's URL for this view.
    pub fn api_url(&self) -> String {
        format!("/api/queue?{}", self.query_string(|k| format!("query[{k}]")))
    }

    fn query_string(&self, name: impl Fn(&str) -> String) -> String {
        let page = if self.page > 0 {
            self.page.to_string()
        } else {
            String::new()
        };
        [
            ("tool", self.tool.as_str()),
            ("agent", self.agent.as_str()),
            ("risk", self.risk.as_str()),
            ("session", self.session.as_str()),
            ("sort", self.sort.as_str()),
            ("page", page.as_str()),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}={}", name(k), super::encode(v)))
        .collect::<Vec<_>>()
        .join("&")
    }
}

/// One value of a filter and how many held calls have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facet {
    pub value: String,
    pub count: u64,
}

impl Facet {
    /// Counts as facets, the most frequent first (ties by value), at most `keep`.
    pub fn ranked(counts: impl IntoIterator<Item = (String, u64)>, keep: usize) -> Vec<Facet> {
        let mut v: Vec<Facet> = counts
            .into_iter()
            .map(|(value, count)| Facet { value, count })
            .collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
        v.truncate(keep);
        v
    }
}

/// One page of the queue, the true counts, and the server's clock so countdowns agree
/// with the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSnapshot {
    pub items: Vec<QueueItem>,
    pub now_ms: i64,
    /// The live-event sequence number the snapshot is current to.
    pub seq: u64,
    /// Every held call.
    pub total: u64,
    /// Held calls that pass the query's filters.
    pub matching: u64,
    /// The page shown (zero-based) and its size.
    pub page: u32,
    pub page_size: u32,
    /// Filter values with their counts (over all held calls).
    pub tools: Vec<Facet>,
    pub agents: Vec<Facet>,
    pub risks: Vec<Facet>,
    /// Break-glass releases nobody has acknowledged yet.
    #[serde(default)]
    pub overrides_awaiting: u64,
}

/// A recent call of the same session, for context on the review page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCall {
    pub id: String,
    pub tool: String,
    pub status: String,
    pub created_at_ms: i64,
}

/// What a call would affect, as the policy previewed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpactView {
    pub paths: Vec<String>,
    pub files: Option<u64>,
    pub bytes: Option<u64>,
    /// False when the count stopped at the policy's limit.
    pub complete: bool,
}

/// Everything the review page shows about one call. Agent-provided text is redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallDetail {
    pub item: QueueItem,
    pub status: String,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
    pub comment: Option<String>,
    /// Redacted arguments, pretty-printed JSON.
    pub arguments: String,
    /// Redacted released arguments of a modified call.
    pub final_arguments: Option<String>,
    pub agent_reason: Option<String>,
    pub plan: Option<String>,
    pub context: Option<String>,
    pub trace_id: Option<String>,
    pub tool_description: String,
    pub impact: Option<ImpactView>,
    /// Rules in shadow mode that would have objected.
    pub shadow: Vec<String>,
    /// JSON pointers of redacted values.
    pub masked: Vec<String>,
    /// May this call be answered with an approve-all grant?
    pub grantable: bool,
    /// Why not, when it may not (shown where the grant option would be).
    pub not_grantable: Option<String>,
    /// May on-call staff release this call under break-glass (the tool allows it)?
    #[serde(default)]
    pub break_glass: bool,
    pub session: Vec<SessionCall>,
    pub result: Option<String>,
    pub now_ms: i64,
}

/// A reviewer's choice on a held call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Approve,
    Reject,
    Modify,
    Skip,
}

impl Verdict {
    /// The name on the wire (as serde writes it).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::Reject => "reject",
            Verdict::Modify => "modify",
            Verdict::Skip => "skip",
        }
    }
}

/// How wide an approve-all grant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantScopeKind {
    Tool,
    Server,
}

impl GrantScopeKind {
    /// The name on the wire (as serde writes it).
    pub fn as_str(self) -> &'static str {
        match self {
            GrantScopeKind::Tool => "tool",
            GrantScopeKind::Server => "server",
        }
    }
}

/// The result of one decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionOutcome {
    pub id: String,
    pub ok: bool,
    /// The call's status afterwards (when known).
    pub status: Option<String>,
    pub message: String,
}

/// An approve-all grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantView {
    pub id: String,
    pub agent: String,
    pub session_id: String,
    /// `tool` or `server`.
    pub scope: String,
    pub name: String,
    pub created_by: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
    pub revoked_by: Option<String>,
    pub revoke_reason: Option<String>,
    pub source_call_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantList {
    pub active: Vec<GrantView>,
    pub ended: Vec<GrantView>,
    pub now_ms: i64,
}

/// The stats page until its charts exist: true counts over what is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsSummary {
    /// Every call ever recorded, and those held now.
    pub calls: u64,
    pub waiting: u64,
    /// How many of the latest calls the breakdowns cover (at most [`STATS_WINDOW`]).
    pub window: u64,
    /// Outcome (status) counts among the latest calls.
    pub statuses: Vec<Facet>,
    /// Which layer denied, among the latest calls that were denied.
    pub layers: Vec<Facet>,
    /// Tools most often asked for among the latest calls.
    pub tools: Vec<Facet>,
    pub oldest_in_window_ms: Option<i64>,
    pub now_ms: i64,
}

/// The Stats page over a time range: calls per bucket by outcome, how long held calls
/// waited for a person, who decided how many, and the range's grants, overrides and
/// expiries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsRange {
    /// `24h`, `7d` or `30d`.
    pub range: String,
    pub from_ms: i64,
    pub to_ms: i64,
    pub bucket_ms: i64,
    /// Per outcome group (`allowed`, `denied`, `held`), one count per bucket.
    pub series: Vec<(String, Vec<u64>)>,
    /// Held calls waiting at the end of each bucket.
    pub depth: Vec<u64>,
    /// Held calls decided by a person: wait until the decision, in ms (p50, p90, p99).
    pub decided_by_people: u64,
    pub wait_p50_ms: Option<i64>,
    pub wait_p90_ms: Option<i64>,
    pub wait_p99_ms: Option<i64>,
    /// Decisions per reviewer with their median time to decide.
    pub reviewers: Vec<ReviewerLoad>,
    pub grants: u64,
    pub overrides: u64,
    pub expiries: u64,
    /// Denials by tool and by rule (the most frequent first, at most ten each).
    pub blocked_tools: Vec<Facet>,
    pub blocked_rules: Vec<Facet>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewerLoad {
    pub reviewer: String,
    pub decisions: u64,
    pub median_ms: i64,
}

/// What rules in shadow mode would have done since a time: per rule how often it fired,
/// on which tools and agents, with the latest examples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowReport {
    pub since_ms: i64,
    pub now_ms: i64,
    pub rules: Vec<ShadowRuleReport>,
    /// More findings than a report reads were there (the counts are of the newest).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowRuleReport {
    pub rule: String,
    pub layer: String,
    /// What it would have made of the calls: `pending` or `denied`.
    pub would: String,
    pub fired: u64,
    pub tools: Vec<Facet>,
    pub agents: Vec<Facet>,
    /// The latest calls it fired for (at most five).
    pub examples: Vec<ShadowExample>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowExample {
    pub call_id: String,
    pub tool: String,
    pub agent: String,
    pub at_ms: i64,
    /// What actually happened to the call.
    pub status: String,
    pub reason: String,
}

/// 55000 → "55,000".
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// How many of the most recent calls the stats page breaks down.
pub const STATS_WINDOW: u64 = 10_000;

#[cfg(test)]
mod tests {
    use super::{who, GrantScopeKind, QueueItem, QueueQuery, Verdict};

    #[test]
    fn wire_names_are_what_serde_writes() {
        for v in [Verdict::Approve, Verdict::Reject, Verdict::Modify, Verdict::Skip] {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{}\"", v.as_str()));
        }
        for g in [GrantScopeKind::Tool, GrantScopeKind::Server] {
            assert_eq!(serde_json::to_string(&g).unwrap(), format!("\"{}\"", g.as_str()));
        }
    }

    #[test]
    fn actors_read_as_names() {
        assert_eq!(who("user:alice"), "alice");
        assert_eq!(who("user:alice, user:bob"), "alice and bob");
        assert_eq!(who("system"), "system");
    }

    #[test]
    fn a_queue_view_round_trips_through_its_url() {
        let q = QueueQuery {
            tool: "write_file".into(),
            session: "a b&c=d".into(),
            sort: "risk".into(),
            page: 2,
            ..Default::default()
        };
        assert_eq!(
            q.to_query_string(),
            "tool=write_file&session=a%20b%26c%3Dd&sort=risk&page=2"
        );
        assert_eq!(QueueQuery::default().to_query_string(), "");
        assert_eq!(
            q.api_url(),
            "/api/queue?query[tool]=write_file&query[session]=a%20b%26c%3Dd&query[sort]=risk&query[page]=2"
        );
        assert!(q.filtered() && !QueueQuery::default().filtered());
    }

    #[test]
    fn live_calls_are_matched_against_the_filters() {
        let item = QueueItem {
            id: "tc_1".into(),
            agent: "bot".into(),
            session_id: "s".into(),
            tool: "write_file".into(),
            server: None,
            risk: "medium".into(),
            destructive: false,
            rule: None,
            reason: String::new(),
            blocked_by: None,
            created_at_ms: 0,
            expires_at_ms: None,
            approvers_required: 1,
            approvals: vec![],
            escalated: false,
        };
        let by = |tool: &str, risk: &str| QueueQuery {
            tool: tool.into(),
            risk: risk.into(),
            ..Default::default()
        };
        assert!(by("", "").matches(&item));
        assert!(by("write_file", "medium").matches(&item));
        assert!(!by("write_file", "high").matches(&item));
        assert!(!by("read_file", "").matches(&item));
    }
}

/// Where a call stands. The names are part of the agent API and the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// Released by the policy (or a grant) on arrival.
    Allowed,
    /// Refused by the policy on arrival.
    Denied,
    /// Held for review.
    Pending,
    Approved,
    /// Approved with a reviewer's arguments.
    Modified,
    Rejected,
    /// A reviewer declined to decide; not executed.
    Skipped,
    /// Nobody decided in time; not executed.
    Expired,
    /// The agent withdrew it.
    Cancelled,
    /// Released under a break-glass override.
    Overridden,
}

impl CallStatus {
    pub const ALL: [CallStatus; 10] = [
        CallStatus::Allowed,
        CallStatus::Denied,
        CallStatus::Pending,
        CallStatus::Approved,
        CallStatus::Modified,
        CallStatus::Rejected,
        CallStatus::Skipped,
        CallStatus::Expired,
        CallStatus::Cancelled,
        CallStatus::Overridden,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Allowed => "allowed",
            CallStatus::Denied => "denied",
            CallStatus::Pending => "pending",
            CallStatus::Approved => "approved",
            CallStatus::Modified => "modified",
            CallStatus::Rejected => "rejected",
            CallStatus::Skipped => "skipped",
            CallStatus::Expired => "expired",
            CallStatus::Cancelled => "cancelled",
            CallStatus::Overridden => "overridden",
        }
    }

    /// May the agent execute the call?
    pub fn executable(self) -> bool {
        matches!(
            self,
            CallStatus::Allowed | CallStatus::Approved | CallStatus::Modified | CallStatus::Overridden
        )
    }
}

impl std::fmt::Display for CallStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CallStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<CallStatus, String> {
        CallStatus::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("unknown call status {s:?}"))
    }
}

impl TryFrom<String> for CallStatus {
    type Error = String;
    fn try_from(s: String) -> Result<CallStatus, String> {
        s.parse()
    }
}

/// Who or what made a call's decision (recorded in the audit trail as `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The policy, on arrival.
    Policy,
    /// An approve-all grant, on arrival.
    Grant,
    /// A person on the review page.
    Reviewer,
    /// On-call staff under break-glass.
    Override,
    /// Nobody decided in time.
    Expiry,
    /// The agent cancelled its own call.
    Agent,
}

impl DecisionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionSource::Policy => "policy",
            DecisionSource::Grant => "grant",
            DecisionSource::Reviewer => "reviewer",
            DecisionSource::Override => "override",
            DecisionSource::Expiry => "expiry",
            DecisionSource::Agent => "agent",
        }
    }

    /// The source of a call's decision as it stands (`None` while pending). A call an
    /// approve-all grant released on arrival is `decided_by` `grant:ID`.
    pub fn of(status: CallStatus, decided_by: Option<&str>) -> Option<DecisionSource> {
        Some(match status {
            CallStatus::Pending => return None,
            CallStatus::Allowed if decided_by.is_some_and(|b| b.starts_with("grant:")) => DecisionSource::Grant,
            CallStatus::Allowed | CallStatus::Denied => DecisionSource::Policy,
            CallStatus::Approved | CallStatus::Modified | CallStatus::Rejected | CallStatus::Skipped => {
                DecisionSource::Reviewer
            }
            CallStatus::Overridden => DecisionSource::Override,
            CallStatus::Expired => DecisionSource::Expiry,
            CallStatus::Cancelled => DecisionSource::Agent,
        })
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn statuses_read_back_from_their_names_and_serde_agrees() {
        for s in CallStatus::ALL {
            assert_eq!(s.as_str().parse::<CallStatus>(), Ok(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert!("Pending".parse::<CallStatus>().is_err());
        let executable: Vec<_> = CallStatus::ALL.into_iter().filter(|s| s.executable()).collect();
        assert_eq!(
            executable,
            [
                CallStatus::Allowed,
                CallStatus::Approved,
                CallStatus::Modified,
                CallStatus::Overridden
            ]
        );
    }
}
