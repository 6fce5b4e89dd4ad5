#!/usr/bin/env bash
# Propose a tool call to Airlock with curl, signed as Standard Webhooks asks.
#   AIRLOCK_URL=http://127.0.0.1:3000 AIRLOCK_AGENT=my-agent AIRLOCK_SECRET=whsec_… bash propose.sh
set -euo pipefail
URL="${AIRLOCK_URL:-http://127.0.0.1:3000}"
BODY='{"session_id":"s-1","tool":"web_search","arguments":{"query":"rust long polling"}}'
ID="msg_$(date +%s%N)"
TS="$(date +%s)"
# The HMAC key is the base64-decoded part after "whsec_".
KEY="$(printf %s "${AIRLOCK_SECRET#whsec_}" | base64 -d | od -An -tx1 | tr -d ' \n')"
SIG="$(printf '%s.%s.%s' "$ID" "$TS" "$BODY" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$KEY" -binary | base64)"
curl -sS "$URL/api/v1/tool-calls" \
  -H 'content-type: application/json' \
  -H "airlock-agent: $AIRLOCK_AGENT" \
  -H "webhook-id: $ID" \
  -H "webhook-timestamp: $TS" \
  -H "webhook-signature: v1,$SIG" \
  -d "$BODY"
echo
