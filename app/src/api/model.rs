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
