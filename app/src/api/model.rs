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
        matches!(self, Role::Reviewer | Role::Oncall)
    }
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

/// Who is signed in, and the CSRF token forms must carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SessionInfo {
    pub user: Option<UserView>,
    pub csrf_token: String,
}

/// Put into request extensions by the server's auth middleware.
#[derive(Debug, Clone, Default)]
pub struct RequestAuth {
    pub user: Option<UserView>,
    pub csrf_token: Option<String>,
}

/// The CSP nonce of this response (request extension set by the server).
#[derive(Debug, Clone)]
pub struct CspNonce(pub String);

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
}

/// The queue, with the server's clock so countdowns agree with the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSnapshot {
    pub items: Vec<QueueItem>,
    pub now_ms: i64,
    /// The live-event sequence number the snapshot is current to.
    pub seq: u64,
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

/// How wide an approve-all grant is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantScopeKind {
    Tool,
    Server,
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
