//! Signed checkpoints of the audit chain.
//!
//! The hash chain shows that no event was edited *relative to the others*; someone who
//! can write the database could still rewrite a stretch and recompute every hash after
//! it. So every [`EVERY`] events (and when the server stops) the chain's head is signed
//! with an Ed25519 key derived from the server key, a file outside the database: a
//! rewrite cannot produce matching signatures. The signed message is
//! `"airlock-checkpoint-v1\0" || seq (u64 BE) || hash (32 bytes) || at_ms (u64 BE)`.
//! The public key and the latest checkpoint can be exported and kept elsewhere
//! (`airlock audit checkpoint`), so a later check does not even need to trust this server.

use super::Head;
use crate::store::{self, Db};
use app::api::ChainCheck;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Events between checkpoints.
pub const EVERY: i64 = 1000;
const DOMAIN: &[u8] = b"airlock-checkpoint-v1\0";

/// The key that signs checkpoints (derived from the server key).
#[derive(Clone)]
pub struct Signer(SigningKey);

impl Signer {
    pub fn from_server_key(key: &crate::agents::ServerKey) -> Signer {
        Signer(SigningKey::from_bytes(
            &key.derive("airlock audit checkpoint signing v1"),
        ))
    }

    pub fn public_key(&self) -> VerifyingKey {
        self.0.verifying_key()
    }
}

/// One signed checkpoint, as stored and as exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub seq: i64,
    pub at_ms: i64,
    /// The chain's hash at `seq` (hex).
    pub hash: String,
    /// Ed25519 public key (hex) and signature (hex).
    pub public_key: String,
    pub signature: String,
}

/// A public key and a checkpoint, as exported to be kept elsewhere (`airlock audit
/// checkpoint`, `GET /api/audit/checkpoint`) and read back by `airlock audit verify
/// --checkpoint FILE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// Ed25519 public key (hex).
    pub public_key: String,
    /// None while nothing has been signed yet.
    pub checkpoint: Option<Checkpoint>,
}

impl Kept {
    pub fn new(signer: &Signer, checkpoint: Option<Checkpoint>) -> Kept {
        Kept {
            public_key: hex::encode(signer.public_key().as_bytes()),
            checkpoint,
        }
    }

    /// The key and checkpoint to trust, from a kept file's text.
    pub fn parse(text: &str) -> Result<(VerifyingKey, Checkpoint), String> {
        let kept: Kept = serde_json::from_str(text).map_err(|e| format!("not a checkpoint: {e}"))?;
        let bytes: [u8; 32] = hex::decode(&kept.public_key)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or("public_key is not 32 bytes of hex")?;
        let key = VerifyingKey::from_bytes(&bytes).map_err(|e| e.to_string())?;
        Ok((key, kept.checkpoint.ok_or("the file holds no checkpoint")?))
    }
}

fn message(seq: i64, hash: &[u8], at_ms: i64) -> Vec<u8> {
    let mut m = Vec::with_capacity(DOMAIN.len() + 48);
    m.extend_from_slice(DOMAIN);
    m.extend_from_slice(&(seq as u64).to_be_bytes());
    m.extend_from_slice(hash);
    m.extend_from_slice(&(at_ms as u64).to_be_bytes());
    m
}

impl Checkpoint {
    /// Does the signature hold, by the given key? (The hash is compared with the chain elsewhere.)
    pub fn signed_by(&self, key: &VerifyingKey) -> bool {
        let (Ok(hash), Ok(sig)) = (hex::decode(&self.hash), hex::decode(&self.signature)) else {
            return false;
        };
        let Ok(sig) = Signature::from_slice(&sig) else {
            return false;
        };
        hex::encode(key.as_bytes()) == self.public_key
            && key.verify(&message(self.seq, &hash, self.at_ms), &sig).is_ok()
    }
}

/// Sign the head as it is now, unless it is already signed. Runs in its own short write
/// transaction, so the head read is the head signed.
pub async fn sign_head(db: &Db, signer: &Signer) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = store::begin_write(db).await?;
    let head = super::head(&mut tx).await?;
    let last: Option<i64> = sqlx::query_scalar("SELECT max(seq) FROM audit_checkpoints")
        .fetch_one(&mut *tx)
        .await?;
    if head.seq == 0 || last.is_some_and(|l| l >= head.seq) {
        return Ok(None);
    }
    let at_ms = store::now_ms();
    let hash = hex::decode(&head.hash).unwrap_or_default();
    let sig = signer.0.sign(&message(head.seq, &hash, at_ms));
    sqlx::query("INSERT INTO audit_checkpoints (seq, at_ms, hash, public_key, signature) VALUES ($1, $2, $3, $4, $5)")
        .bind(head.seq)
        .bind(at_ms)
        .bind(&hash)
        .bind(signer.public_key().as_bytes().as_slice())
        .bind(sig.to_bytes().as_slice())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(head.seq))
}

/// The background task: sign the head whenever [`EVERY`] events have been added.
pub async fn run(db: Db, signer: Signer) {
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let due = async {
            let (head, last): (i64, Option<i64>) = sqlx::query_as(
                "SELECT (SELECT coalesce(max(seq), 0) FROM audit_events), (SELECT max(seq) FROM audit_checkpoints)",
            )
            .fetch_one(&db)
            .await?;
            Ok::<bool, sqlx::Error>(head - last.unwrap_or(0) >= EVERY)
        };
        match due.await {
            Ok(true) => {
                if let Err(e) = sign_head(&db, &signer).await {
                    tracing::warn!(error = %e, "signing an audit checkpoint");
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "reading the audit head"),
        }
    }
}

/// Every stored checkpoint, oldest first.
pub async fn all(db: &Db) -> Result<Vec<Checkpoint>, sqlx::Error> {
    type Row = (i64, i64, Vec<u8>, Vec<u8>, Vec<u8>);
    let rows: Vec<Row> =
        sqlx::query_as("SELECT seq, at_ms, hash, public_key, signature FROM audit_checkpoints ORDER BY seq")
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(seq, at_ms, hash, pk, sig)| Checkpoint {
            seq,
            at_ms,
            hash: hex::encode(hash),
            public_key: hex::encode(pk),
            signature: hex::encode(sig),
        })
        .collect())
}

/// The newest checkpoint, for export.
pub async fn latest(db: &Db) -> Result<Option<Checkpoint>, sqlx::Error> {
    Ok(all(db).await?.pop())
}

/// Verify the chain, then every checkpoint against it: signed by a trusted key, and the
/// chain's hash at its place equal to the signed one. The first problem names the event
/// where the chain and its signatures stop agreeing.
pub async fn check(db: &Db, trusted: &[VerifyingKey], extra: &[Checkpoint]) -> Result<ChainCheck, sqlx::Error> {
    let v = super::verify(db).await?;
    let mut problem = v.problem.clone();
    let mut ok = 0u64;
    let mut cps = all(db).await?;
    cps.extend(extra.iter().cloned());
    cps.sort_by_key(|c| c.seq);
    let mut last_good = 0;
    for c in &cps {
        if problem.is_some() {
            break;
        }
        if !trusted.iter().any(|k| c.signed_by(k)) {
            problem = Some((
                c.seq,
                format!(
                    "the checkpoint at event {} is not signed by a trusted key: checkpoints were forged",
                    c.seq
                ),
            ));
            break;
        }
        if c.seq > v.head.seq {
            problem = Some((
                v.head.seq + 1,
                format!(
                    "events up to {} were signed but the chain ends at {}: events were deleted",
                    c.seq, v.head.seq
                ),
            ));
            break;
        }
        let stored = super::hash_in(db, c.seq).await?;
        if stored.as_deref() != Some(c.hash.as_str()) {
            problem = Some((
                last_good + 1,
                format!(
                    "the chain at event {} does not match its signed checkpoint: events {}–{} were rewritten (hashes recomputed)",
                    c.seq,
                    last_good + 1,
                    c.seq
                ),
            ));
            break;
        }
        last_good = c.seq;
        ok += 1;
    }
    Ok(ChainCheck {
        up_to: problem.as_ref().map_or(v.head.seq, |(seq, _)| (seq - 1).max(0)),
        checked_at_ms: store::now_ms(),
        checkpoints: ok,
        problem,
    })
}

/// The head as a checkpoint would sign it (for tests and tools).
pub fn head_message(head: &Head, at_ms: i64) -> Vec<u8> {
    message(head.seq, &hex::decode(&head.hash).unwrap_or_default(), at_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_holds_only_for_its_own_content_and_key() {
        let key = crate::agents::ServerKey::from_bytes(&[3u8; 32]);
        let s = Signer::from_server_key(&key);
        let hash = [9u8; 32];
        let sig = s.0.sign(&message(5, &hash, 77));
        let c = Checkpoint {
            seq: 5,
            at_ms: 77,
            hash: hex::encode(hash),
            public_key: hex::encode(s.public_key().as_bytes()),
            signature: hex::encode(sig.to_bytes()),
        };
        assert!(c.signed_by(&s.public_key()));
        for altered in [
            Checkpoint { seq: 6, ..c.clone() },
            Checkpoint { at_ms: 78, ..c.clone() },
            Checkpoint {
                hash: hex::encode([8u8; 32]),
                ..c.clone()
            },
        ] {
            assert!(!altered.signed_by(&s.public_key()));
        }
        let other = Signer::from_server_key(&crate::agents::ServerKey::from_bytes(&[4u8; 32]));
        assert!(!c.signed_by(&other.public_key()));
        assert_eq!(
            head_message(
                &Head {
                    seq: 5,
                    hash: hex::encode(hash)
                },
                77
            ),
            message(5, &hash, 77)
        );
        // What is exported is what `verify --checkpoint` reads back.
        let text = serde_json::to_string(&Kept::new(&s, Some(c.clone()))).unwrap();
        assert_eq!(Kept::parse(&text), Ok((s.public_key(), c)));
        let empty = serde_json::to_string(&Kept::new(&s, None)).unwrap();
        assert!(Kept::parse(&empty).is_err());
        assert!(Kept::parse(r#"{"public_key": "00", "checkpoint": null}"#).is_err());
    }
}
