"""Writes example_graph.json: a realistic two-tenant knowledge graph (deterministic, stdlib only).

Run: python examples/generate_example_graph.py

The stories are hand-written data tables below (people, clusters, work items, docs, code files,
signals, and the links between them). Code only assembles them: work item descriptions get their
context and acceptance criteria sections from small per-project pools picked with a fixed-seed RNG,
docs get an ownership footer. No clock is read; the output is byte-identical on every run.
Every reference is checked while building: an unknown key raises instead of being skipped.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "data" / "example_graph.json"
SEED = 20261122
DESCRIPTION = (
    "Example knowledge graph of two tenants for brain-graph demos and tests: acme (projects AUTH, PAY, "
    "SEARCH) and globex (CORE, BILLING), with work items, docs, code files, signals, clusters and people."
)

TRACKER = {"acme": "https://tracker.acme.example/browse", "globex": "https://jira.globex.example/browse"}
WIKI = {"acme": "https://wiki.acme.example/pages", "globex": "https://docs.globex.example/wiki"}
INCIDENTS = {"acme": "https://status.acme.example/incidents", "globex": "https://globex.pagerduty.example/incidents"}
REPOS = {
    "acme/platform": "https://git.acme.example/acme/platform/blob/main",
    "acme/mobile-sdk": "https://git.acme.example/acme/mobile-sdk/blob/main",
    "acme/storefront": "https://git.acme.example/acme/storefront/blob/main",
    "globex/core": "https://git.globex.example/globex/core/-/blob/main",
    "globex/billing": "https://git.globex.example/globex/billing/-/blob/main",
}

# ----------------------------------------------------------------------------------------------
# People (PII: reachable only through ASSIGNED_TO, which expansion never follows).
# Their names and emails appear nowhere else in the graph; work items carry only the handle.
# ----------------------------------------------------------------------------------------------
PEOPLE: dict[str, list[tuple[str, str, str]]] = {
    "acme": [
        ("alice", "Alice Moreau", "security"),
        ("bob", "Bob Tanaka", "payments"),
        ("chen", "Chen Wei", "search"),
        ("dana", "Dana Okafor", "identity"),
        ("fatima", "Fatima Zahra", "sre"),
        ("jose", "José Álvarez", "payments"),
        ("zoe", "Zoë Brandt", "search"),
    ],
    "globex": [
        ("gus", "Gus Ferreira", "core"),
        ("hana", "Hana Novak", "billing"),
        ("ivan", "Ivan Petrov", "sre"),
        ("jo", "Jo Kim", "core"),
        ("soren", "Søren Kjær", "billing"),
    ],
}

# ----------------------------------------------------------------------------------------------
# Clusters: episodes (one incident or initiative) and themes (ongoing areas of work).
# (tenant, project, slug, kind, title, summary, period, context sentences for work item descriptions)
# ----------------------------------------------------------------------------------------------
CLUSTERS: list[tuple[str, str, str, str, str, str, str, list[str]]] = [
    (
        "acme", "AUTH", "token-refresh-outage", "episode", "OAuth token refresh outage",
        "On 14 March a signing key rotation combined with a race between concurrent token refresh calls "
        "revoked live sessions; refresh tokens were rejected and users were logged out for 41 minutes. "
        "This episode groups the SEV1 incident, its alerts, the postmortem, and the follow-up fixes to "
        "token refresh, key rotation and alerting.",
        "2026-03",
        [
            "During the OAuth token refresh outage on 14 March, refresh tokens were rejected for 41 minutes "
            "and roughly 18% of active web and mobile sessions were logged out.",
            "The token refresh outage showed that concurrent refresh calls, key rotation and reuse detection "
            "interact in ways none of our tests covered.",
            "This is a follow-up from the 14 March token refresh incident (SEV1); the postmortem lists it "
            "as a required action item.",
        ],
    ),
    (
        "acme", "AUTH", "mfa-rollout", "episode", "Multi-factor authentication rollout",
        "Rolling out second factors (WebAuthn security keys and TOTP apps) to every workspace, mandatory "
        "for admins first, with recovery codes and trusted devices so that support load stays flat.",
        "2026-Q2",
        [
            "MFA becomes mandatory for workspace admins on 1 June and for everyone who opts in before that.",
            "The MFA rollout is measured by enrolment rate and by support tickets about lost second factors.",
        ],
    ),
    (
        "acme", "AUTH", "sso-oidc-migration", "episode", "Enterprise SSO: SAML to OIDC migration",
        "Moving enterprise single sign-on connections from SAML to OpenID Connect, with just-in-time "
        "provisioning and safer token handling; started after IdP certificate rotations broke SAML "
        "logins for three enterprise customers.",
        "2026-Q2",
        [
            "Enterprise SSO customers are moving from SAML to OIDC over the next two quarters.",
            "The SSO migration must not log anyone out: both protocols run side by side per connection.",
        ],
    ),
    (
        "acme", "AUTH", "auth-hardening", "theme", "AUTH maintenance and hardening",
        "Ongoing identity work that is not tied to one incident: login abuse protection, audit logging, "
        "API key clean-up, service accounts and dependency upgrades.",
        "2026",
        [
            "This is part of the identity team's hardening backlog, reviewed every two weeks with security.",
            "Hardening work is scheduled between incidents; nothing here is urgent on its own.",
        ],
    ),
    (
        "acme", "PAY", "duplicate-charges", "episode", "Duplicate card charges",
        "On 3 March, retries after card gateway timeouts captured 412 payments twice. The fix makes every "
        "capture idempotent (idempotency keys derived from the order), treats timeouts as an unknown "
        "outcome that is reconciled before any retry, and adds a duplicate capture detector and a refund "
        "runbook.",
        "2026-03",
        [
            "On 3 March, retries after card gateway timeouts charged 412 customers twice before the "
            "duplicate capture detector fired.",
            "The duplicate charges incident was caused by retrying captures that had actually succeeded "
            "at the gateway; idempotency keys are the structural fix.",
            "Follow-up of the duplicate card charges postmortem: payments must be safe to retry.",
        ],
    ),
    (
        "acme", "PAY", "checkout-latency", "episode", "Checkout latency regression",
        "Checkout p95 latency doubled (0.9 s to 2.1 s) after checkout 2.7 added inline fraud scoring to the "
        "payment path; currency conversion lookups and a saturated gateway connection pool made it worse.",
        "2026-05",
        [
            "Since checkout 2.7, p95 checkout latency is above 2 seconds and conversion dropped 1.8%.",
            "The checkout latency regression is tracked per dependency on the checkout dashboard.",
        ],
    ),
    (
        "acme", "PAY", "payments-roadmap", "theme", "Payment methods and compliance",
        "New payment methods, strong customer authentication, chargebacks, tax and the regular upkeep of "
        "the payments services.",
        "2026",
        [
            "This is roadmap work for the payments team, planned quarterly with finance and compliance.",
            "Payments roadmap item; it ships behind a per-merchant flag like everything in checkout.",
        ],
    ),
    (
        "acme", "SEARCH", "relevance-tuning", "theme", "Search relevance tuning",
        "Improving product search ranking: synonyms, typo and accent tolerance, in-stock boosts and a "
        "learning-to-rank model trained on click feedback, all measured on a judged offline set (NDCG@10).",
        "2026",
        [
            "Relevance work is judged on the offline evaluation set first and then in an A/B test.",
            "Search relevance tuning: every ranking change needs an NDCG@10 comparison before review.",
        ],
    ),
    (
        "acme", "SEARCH", "index-lag", "episode", "Search index lag after bulk import",
        "A catalogue bulk import of 2.3 million products flooded the indexing consumer; search served "
        "stale prices and availability for six hours until the backlog drained.",
        "2026-04",
        [
            "On 22 April the indexing consumer fell six hours behind after a catalogue bulk import.",
            "The index lag incident showed we have no back-pressure between imports and indexing.",
        ],
    ),
    (
        "globex", "CORE", "session-token-expiry", "episode", "Session token expiry bug",
        "Mobile users were logged out every hour: session tokens expired early because API nodes disagreed "
        "about the time (clock skew up to 94 s on api-7) and the mobile app had no token refresh endpoint, "
        "so every expiry meant a new login.",
        "2026-06",
        [
            "Since the June release, mobile users are logged out hourly because session tokens expire early.",
            "The session token expiry bug comes from clock skew between API nodes and a missing token "
            "refresh flow in the mobile app.",
        ],
    ),
    (
        "globex", "CORE", "retry-storm", "episode", "API gateway retry storm",
        "A gateway restart caused a burst of errors; internal clients retried immediately and without a "
        "budget, multiplying traffic by eight and keeping the gateway overloaded for 55 minutes.",
        "2026-07",
        [
            "After the 9 July gateway restart, internal clients retried without backoff and caused a "
            "retry storm (SEV1).",
            "The retry storm showed that retries need budgets, jitter and circuit breakers everywhere.",
        ],
    ),
    (
        "globex", "CORE", "core-platform", "theme", "CORE platform upkeep",
        "Shared platform work for Globex services: toolchain upgrades, logging, feature flags, database "
        "pools and secrets rotation.",
        "2026",
        [
            "Platform upkeep for every Globex service; owned by the CORE team.",
            "This is CORE platform work, scheduled in the monthly platform planning.",
        ],
    ),
    (
        "globex", "BILLING", "invoice-retries", "episode", "Invoice payment retries",
        "Failed invoice payments are retried on a schedule and followed by dunning emails. In July the "
        "retry queue backed up, some invoices were retried twice and customers got duplicate dunning "
        "emails; expired payment provider tokens caused a wave of failed renewals.",
        "2026-07",
        [
            "In July the invoice retry queue backed up to 14,000 jobs and some invoices were retried twice.",
            "Billing retries must be idempotent and payday-aware; this came out of the July retry backlog.",
        ],
    ),
    (
        "globex", "BILLING", "tax-invoicing", "theme", "Tax and invoicing correctness",
        "Correct tax rates, currencies, tax ids, proration and fast invoice rendering, per country.",
        "2026",
        [
            "Invoicing correctness matters for audits: every invoice must be reproducible from its inputs.",
            "Tax and invoicing work is reviewed with finance before release.",
        ],
    ),
    (
        "globex", "BILLING", "billing-upkeep", "theme", "Billing product upkeep",
        "Smaller billing features and upkeep: usage meters, credit notes, the customer billing portal and "
        "localised billing emails.",
        "2026",
        [
            "Billing upkeep; planned with customer success every month.",
            "This is a smaller billing product improvement requested by customer success.",
        ],
    ),
]  # fmt: skip

PROJECT_TENANT = {"AUTH": "acme", "PAY": "acme", "SEARCH": "acme", "CORE": "globex", "BILLING": "globex"}


def W(  # noqa: N802 (a short constructor for the tables below)
    key: str,
    title: str,
    summary: str,
    detail: str,
    *,
    cl: list[str],
    who: str,
    st: str,
    pr: str,
    labels: list[str],
    docs: tuple[str, ...] | list[str] = (),
    code: tuple[str, ...] | list[str] = (),
    sig: tuple[str, ...] | list[str] = (),
    dep: tuple[str, ...] | list[str] = (),
    done: tuple[str, ...] | list[str] = (),
) -> dict[str, Any]:
    """One work item: key (PROJECT-number), texts, links by local key, status fields."""
    return {
        "key": key, "title": title, "summary": summary, "detail": detail.strip(), "clusters": cl,
        "assignee": who, "status": st, "priority": pr, "labels": labels, "docs": list(docs),
        "code": list(code), "signals": list(sig), "depends": list(dep), "done": list(done),
    }  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Work items. docs/code/sig/dep name doc slugs, code paths, signal slugs and work keys of the same
# tenant. "detail" is the hand-written part of the description.
# ----------------------------------------------------------------------------------------------
WORK: list[dict[str, Any]] = [
    # ---------------------------------------------------------------- acme AUTH: token refresh outage
    W(
        "AUTH-101", "Fix race condition in token refresh",
        "Root cause of the token refresh outage: two concurrent token refresh requests for the same session "
        "both redeem one refresh token, the second is treated as token reuse and the whole session is revoked.",
        """
When a browser tab and a background fetch (or two tabs) notice an expired access token at the same time,
both call POST /oauth/token with grant_type=refresh_token and the same refresh token. The token service
rotates refresh tokens on every use, so the first request wins and marks the old token as consumed. The
second request arrives 5-40 ms later, finds a consumed token and takes the reuse-detection path, which
revokes the entire token family. The user is logged out everywhere.

This was harmless while refreshes were rare. During the 14 March key rotation every access token was
re-validated at once, refreshes spiked to 30x normal, and the race fired for about 18% of active sessions.

Proposed fix, in order:

1. Server side: make redemption atomic with a compare-and-set on the refresh token row
   (UPDATE ... WHERE token_hash = ? AND consumed_at IS NULL) instead of read-then-write.
2. Server side: keep the response of the winning refresh for a short grace window (10 s) keyed by
   the old token hash, and return the same token pair to a concurrent loser instead of treating it as
   reuse. Real reuse (after the window, or from another client id) still revokes the family.
3. Client side (web): single-flight the refresh in the session manager so one tab refreshes and the
   others wait on the same promise (BroadcastChannel between tabs).
4. Mobile SDK: same single-flight behaviour, tracked separately in AUTH-108.

Risks: the grace window must not become a way to mint tokens from a stolen refresh token. We only
replay the exact response to the same client id and device binding, and we log every replay with
the reason "concurrent_refresh" so security can audit it.

Testing: a deterministic reproduction exists in tests/auth/test_refresh_race.py (two threads, a barrier
before redemption). It fails on main and must pass with the fix. The load test from AUTH-107 runs the
same scenario with 500 concurrent sessions.
""",
        cl=["token-refresh-outage"], who="dana", st="in_review", pr="urgent",
        labels=["token-refresh", "race-condition", "sev1-followup"],
        docs=["token-refresh-design", "postmortem-oauth-token-refresh-outage"],
        code=["services/auth/token_refresh.py", "services/auth/refresh_store.py"],
        sig=["token-refresh-outage-1", "token-refresh-outage-2", "edge-proxy-tls"],
        done=[
            "The two-thread reproduction in tests/auth/test_refresh_race.py passes",
            "Concurrent refreshes within the grace window return the same token pair",
            "Replays are logged with reason concurrent_refresh",
            "Reuse after the grace window still revokes the token family",
        ],
    ),
    W(
        "AUTH-102", "Add jitter to token refresh scheduling",
        "Clients refresh access tokens exactly at expiry, so every client that logged in during a spike "
        "refreshes in the same second. Refresh at a random point in the last 20% of the token lifetime.",
        """
Access tokens live 15 minutes. The web session manager and both mobile SDKs schedule the refresh at
expires_at - 5 s. After the outage, when everybody logged in again within a few minutes, the token
endpoint saw a synchronised wave of refreshes every 15 minutes for the rest of the day.

Change the scheduler to pick a uniformly random point between 80% and 95% of the lifetime, and add a
small random delay before retrying a failed refresh (exponential backoff with full jitter, capped at
30 s).
""",
        cl=["token-refresh-outage"], who="dana", st="done", pr="high",
        labels=["token-refresh", "client"],
        docs=["token-refresh-design"], code=["services/auth/token_refresh.py", "sdk/mobile/TokenRefresher.kt"],
        sig=["token-refresh-outage-5"], dep=["AUTH-101"],
    ),
    W(
        "AUTH-103", "Rotate signing keys without invalidating refresh tokens",
        "Key rotation removed the previous signing key immediately, so every access token signed with it "
        "failed verification at once. Keep the previous key for verification until its tokens expire.",
        """
The rotation job generated a new RS256 key, published it to the JWKS endpoint and deleted the old key
in the same step. Access tokens signed with the old key failed verification everywhere, and every client
refreshed at the same moment, which is what turned the refresh race (AUTH-101) into an outage.

New rotation procedure: (1) publish the new key as "next" so verifiers cache it, (2) after one JWKS cache
lifetime (10 minutes) start signing with it, (3) keep the old key as "previous" for verification for
access token lifetime plus clock leeway (20 minutes), (4) only then retire it. The runbook for key
rotation is updated with these steps and a dry-run command.
""",
        cl=["token-refresh-outage"], who="alice", st="done", pr="urgent",
        labels=["key-rotation", "sev1-followup"],
        docs=["runbook-auth-service-key-rotation", "token-refresh-design", "postmortem-oauth-token-refresh-outage"],
        code=["services/auth/keys.py"], sig=["token-refresh-outage-3", "token-refresh-outage-1"],
    ),
    W(
        "AUTH-104", "Alert on refresh token rejection rate",
        "We learned about the outage from customers. Page the identity on-call when refresh token "
        "rejections exceed 2% of refresh attempts for five minutes.",
        """
The only alert that fired during the incident was the generic 5xx alert, 19 minutes in, because
rejected refresh tokens are 400 responses. Add a metric auth_refresh_total{result="ok|expired|reused|
invalid_signature"} and alert on the ratio of non-ok results. Reused tokens get their own panel: a
spike there means either an attack or the race from AUTH-101.
""",
        cl=["token-refresh-outage"], who="fatima", st="done", pr="high",
        labels=["alerting", "observability"],
        docs=["runbook-token-refresh-errors"], code=["services/auth/token_refresh.py"],
        sig=["token-refresh-outage-2"],
    ),
    W(
        "AUTH-105", "Restore sessions revoked during the 14 March incident",
        "About 41,000 sessions were revoked by reuse detection during the incident. Offer affected users a "
        "one-click re-login that restores their carts and drafts.",
        """
Revoked token families are still in the database with revoked_reason = "reuse_detected" and a timestamp
inside the incident window. Carts and unsaved drafts are keyed by user id, not session, so they were not
lost, but users do not know that. Send an in-app banner on next login and a one-time email to users who
have not come back within 48 hours.
""",
        cl=["token-refresh-outage"], who="dana", st="done", pr="medium",
        labels=["customer-impact"],
        docs=["postmortem-oauth-token-refresh-outage", "runbook-token-refresh-errors"], sig=["token-refresh-outage-4"],
        dep=["AUTH-101"],
    ),
    W(
        "AUTH-106", "Grace window for refresh token reuse detection",
        "Reuse detection revokes the whole session on any second use of a refresh token. Allow a short, "
        "audited grace window for the same client so that network retries do not log users out.",
        """
Besides the concurrency race, mobile clients on flaky networks retry the refresh request when the response
is lost. The server already rotated the token, so the retry looks like reuse. The grace window from
AUTH-101 covers both cases; this ticket is about the policy: window length (10 s), which attributes must
match (client id, device binding, IP prefix), and what gets logged. Security signed off on 10 s.
""",
        cl=["token-refresh-outage"], who="alice", st="in_progress", pr="high",
        labels=["token-refresh", "security"],
        docs=["token-refresh-design", "threat-model-account-takeover"], code=["services/auth/refresh_store.py"],
        dep=["AUTH-101"],
    ),
    W(
        "AUTH-107", "Load test the token endpoint with concurrent refreshes",
        "Add a load test that refreshes the same session from several clients at once and runs a key "
        "rotation in the middle, so the outage scenario is exercised before every release.",
        """
The existing load test logs in 10,000 synthetic users and refreshes each token once, sequentially. It
never sends two refreshes for one session and never rotates keys. New scenario: 500 sessions, each with 3
concurrent refreshers, a key rotation at minute 5, and assertions that no session is revoked and p99
latency of /oauth/token stays below 300 ms.
""",
        cl=["token-refresh-outage"], who="fatima", st="open", pr="medium",
        labels=["testing", "performance"],
        code=["services/auth/token_refresh.py"], sig=["token-refresh-outage-5"], dep=["AUTH-101", "AUTH-103"],
    ),
    W(
        "AUTH-108", "Mobile SDK: single-flight token refresh",
        "The Android and iOS SDKs start a new token refresh for every request that gets a 401. Share one "
        "in-flight refresh per session and make the other requests wait for it.",
        """
During the outage one Android client sent 14 refresh requests within 200 ms. The SDK's OkHttp
authenticator runs per request, so parallel API calls each refresh on their own. Use a mutex around the
refresh and re-check the token after acquiring it: if another caller already refreshed, reuse the new
token. iOS gets the same treatment with an actor.
""",
        cl=["token-refresh-outage"], who="dana", st="in_progress", pr="high",
        labels=["mobile", "token-refresh"],
        docs=["token-refresh-design"], code=["sdk/mobile/TokenRefresher.kt"], sig=["token-refresh-outage-4"],
        dep=["AUTH-101"],
    ),
    # ---------------------------------------------------------------- acme AUTH: MFA rollout
    W(
        "AUTH-109", "Support WebAuthn security keys",
        "Register and verify FIDO2 security keys and platform authenticators (Touch ID, Windows Hello) "
        "as a second factor.",
        """
Implement the WebAuthn registration and assertion ceremonies with resident keys optional. Store the
credential id, public key, sign count and transports per user. Reject assertions whose sign count goes
backwards (cloned authenticator) unless the authenticator reports a count of zero. Attestation is not
verified; we only record the AAGUID for reporting.
""",
        cl=["mfa-rollout"], who="alice", st="done", pr="high", labels=["mfa", "webauthn"],
        docs=["adr-014-webauthn-over-sms", "mfa-enrolment-guide"], code=["services/auth/webauthn.py"],
    ),
    W(
        "AUTH-110", "Enforce MFA for workspace admins",
        "Workspace admins must enrol a second factor before they can change roles, billing details or SSO "
        "settings. Existing admins get a 14-day grace period.",
        """
Add an mfa_required policy evaluated on privileged actions. During the grace period admins see a banner;
after it, privileged endpoints return 403 with error code mfa_enrolment_required and the console redirects
to enrolment. Support can extend the grace period per workspace.
""",
        cl=["mfa-rollout"], who="dana", st="in_progress", pr="high", labels=["mfa", "policy"],
        docs=["mfa-enrolment-guide"], code=["services/auth/login_handler.py"], dep=["AUTH-109", "AUTH-111"],
    ),
    W(
        "AUTH-111", "Recovery codes for MFA",
        "Generate ten single-use recovery codes at enrolment, show them once, and let users regenerate "
        "them after re-authenticating.",
        """
Codes are 10 characters from a 32-symbol alphabet without ambiguous characters, stored as Argon2id hashes.
Using a code signs the user in and prompts them to enrol a new factor. The support ticket volume about
lost phones is the success metric.
""",
        cl=["mfa-rollout"], who="alice", st="done", pr="medium", labels=["mfa"],
        docs=["mfa-enrolment-guide"], code=["services/auth/login_handler.py"], sig=["mfa-recovery-feedback"],
    ),
    W(
        "AUTH-112", "Login handler: ask for the second factor after the password check",
        "Split the login handler into a password step and a second-factor step with a short-lived, "
        "single-purpose challenge token in between.",
        """
Today the login handler issues a session immediately after the password check. The new flow issues an
mfa_challenge token (2 minutes, audience "mfa") that can only be exchanged for a session together with a
valid WebAuthn assertion, TOTP code or recovery code. Failed second-factor attempts count towards the same
rate limit as passwords.
""",
        cl=["mfa-rollout"], who="dana", st="done", pr="high", labels=["mfa", "login"],
        docs=["adr-014-webauthn-over-sms", "auth-service-architecture"],
        code=["services/auth/login_handler.py", "services/auth/rate_limit.py"], sig=["mfa-failed-second-factor"],
        dep=["AUTH-109"],
    ),
    W(
        "AUTH-113", "Remember trusted devices for 30 days",
        "After a successful second factor, let users mark the device as trusted so they are not asked "
        "again for 30 days; admins can revoke trusted devices.",
        """
A trusted-device cookie holds a random id bound to the user and the device fingerprint hash. It is not a
session and cannot authenticate on its own; it only skips the second-factor step after a correct password.
Workspaces can disable the feature. This also covers the hardening review item about long-lived cookies.
""",
        cl=["mfa-rollout", "auth-hardening"], who="alice", st="open", pr="medium", labels=["mfa", "devices"],
        docs=["threat-model-account-takeover", "mfa-enrolment-guide"], code=["services/auth/login_handler.py"],
        dep=["AUTH-112"],
    ),
    # ---------------------------------------------------------------- acme AUTH: SSO migration
    W(
        "AUTH-114", "Migrate enterprise SSO connections from SAML to OIDC",
        "Run SAML and OIDC side by side for each enterprise connection, switch logins to OIDC per "
        "customer, and retire SAML once every connection has moved.",
        """
There are 64 enterprise SAML connections. Each gets an OIDC connection with the same domain routing, and a
per-connection flag decides which protocol serves logins. Sessions are protocol independent, so switching
does not log anyone out. Customers with Okta and Entra ID go first because their IdPs support OIDC with no
extra work on their side.
""",
        cl=["sso-oidc-migration"], who="dana", st="in_progress", pr="high", labels=["sso", "oidc", "saml"],
        docs=["sso-oidc-migration-plan", "auth-service-architecture"], code=["services/auth/oidc_client.py"],
        sig=["saml-cert-expiry"],
    ),
    W(
        "AUTH-115", "SAML metadata refresh fails for rotated IdP certificates",
        "We fetch IdP metadata only when a connection is created, so when an IdP rotates its signing "
        "certificate, SAML logins fail until support re-imports the metadata.",
        """
Three enterprise customers were locked out in April after their IdP rotated certificates. Refresh metadata
daily from the metadata URL when one is configured, accept both old and new certificates during an overlap,
and alert when a certificate expires within 14 days.
""",
        cl=["sso-oidc-migration"], who="dana", st="done", pr="urgent", labels=["sso", "saml"],
        docs=["sso-oidc-migration-plan"], sig=["saml-cert-expiry"],
    ),
    W(
        "AUTH-116", "Just-in-time provisioning for OIDC users",
        "Create or update workspace members from OIDC ID token claims on first login, mapping IdP groups "
        "to workspace roles.",
        """
Claims used: sub, email, email_verified, name and a configurable groups claim. Users are matched by the
(connection, sub) pair, never by email alone. Group to role mapping is configured per connection; unknown
groups map to the default member role.
""",
        cl=["sso-oidc-migration"], who="dana", st="open", pr="medium", labels=["sso", "oidc", "provisioning"],
        docs=["sso-oidc-migration-plan"], code=["services/auth/oidc_client.py"], dep=["AUTH-114"],
    ),
    W(
        "AUTH-117", "Harden SSO token handling after the security review",
        "Address the open findings of the SSO token handling review: token logging, nonce checks and "
        "the storage of IdP refresh tokens.",
        """
The review found that IdP refresh tokens appear in debug logs when the OIDC client logs a failed refresh,
that the nonce is not checked on the implicit hybrid flow used by two legacy connections, and that IdP
refresh tokens are encrypted with the same key as our own session secrets. Details and severity ratings
are in the review document; remediation deadlines follow the security policy.
""",
        cl=["sso-oidc-migration", "auth-hardening"], who="alice", st="in_progress", pr="high",
        labels=["security", "sso", "token"],
        docs=["security-review-sso"], code=["services/auth/oidc_client.py"],
    ),
    # ---------------------------------------------------------------- acme AUTH: hardening theme
    W(
        "AUTH-118", "Rate limit login attempts per IP and per account",
        "Throttle password and second-factor attempts with two sliding windows, per source IP and per "
        "account, to slow down credential stuffing without locking out real users.",
        """
Limits: 20 attempts per IP per minute, 10 failed attempts per account per 15 minutes. Exceeding the account
limit requires a CAPTCHA instead of locking the account. The limiter uses Redis with a sliding log and
fails open if Redis is unavailable, with an alert.
""",
        cl=["auth-hardening"], who="alice", st="done", pr="high", labels=["security", "rate-limit"],
        docs=["threat-model-account-takeover", "auth-service-architecture"], code=["services/auth/rate_limit.py"],
        sig=["login-bruteforce"],
    ),
    W(
        "AUTH-119", "Audit log for role and permission changes",
        "Record who changed which role or permission, when and from where, and show it to workspace admins.",
        """
Every role change, SSO configuration change and API key creation writes an audit event with actor,
target, before/after values, IP and user agent. Events are append-only and exported daily to the SIEM.
""",
        cl=["auth-hardening"], who="dana", st="done", pr="medium", labels=["audit", "compliance"],
        docs=["auth-service-architecture"], code=["services/auth/audit_log.py"],
    ),
    W(
        "AUTH-120", "Remove legacy API keys",
        "Legacy API keys never expire and cannot be scoped. Migrate the remaining 300 integrations to "
        "scoped tokens and switch the legacy keys off.",
        """
Send three notices over 90 days to owners of keys that were used in the last month. Keys unused for a year
are revoked immediately. After the deadline, requests with a legacy key get 401 with a link to the
migration guide.
""",
        cl=["auth-hardening"], who="alice", st="open", pr="medium", labels=["api-keys", "deprecation"],
        code=["services/auth/audit_log.py"],
    ),
    W(
        "AUTH-121", "Service accounts for CI pipelines",
        "CI pipelines use personal API keys today. Offer service accounts with short-lived tokens obtained "
        "through OIDC workload identity federation.",
        """
CI providers issue OIDC tokens for each job; the token service exchanges them for a 15-minute access token
of a service account, based on trust rules (repository, branch, environment). No long-lived secret is
stored in CI.
""",
        cl=["auth-hardening"], who="dana", st="open", pr="low", labels=["service-accounts", "ci"],
        docs=["auth-service-architecture"], code=["services/auth/token_refresh.py"], dep=["AUTH-120"],
    ),
    W(
        "AUTH-122", "Upgrade logging library",
        "Upgrade the structured logging library to the supported major version.",
        """
The current version is out of support and pulls in a vulnerable YAML parser. The new major version changes
the processor API; our custom redaction processor (which removes tokens and emails from log lines) needs
to be ported and its tests kept.
""",
        cl=["auth-hardening"], who="fatima", st="open", pr="low", labels=["chore", "dependencies"],
    ),
]  # fmt: skip

WORK += [
    # ---------------------------------------------------------------- acme PAY: duplicate charges
    W(
        "PAY-101", "Retry failed card captures with idempotency keys",
        "Every capture request to the card gateway carries an idempotency key derived from the order and "
        "attempt, so a retried capture can never charge a card twice.",
        """
Root cause of the duplicate charges on 3 March: the payments client retried a capture after a 10 s read
timeout, but the first capture had succeeded at the gateway. Without an idempotency key the gateway
treated the retry as a new capture. 412 orders were charged twice, 37 of them three times.

The gateway supports an Idempotency-Key header and keeps keys for 24 hours. We will send
key = sha256(merchant_id, order_id, "capture", capture_sequence), where capture_sequence only changes for
a deliberate new capture (for example a partial capture of a split shipment), never for a retry.

Before sending, the capture service writes the key into payment_idempotency_keys with state "pending".
On a 2xx it stores the gateway response and marks the key "succeeded". On a timeout or a connection reset
it marks the key "unknown" and does NOT retry blindly: it asks the gateway for the capture status by key
(GET /captures?idempotency_key=...). Only a confirmed "not found" allows a retry with the same key.

A retry with the same key that reaches the gateway returns the original result, so even a wrong decision
here cannot double charge. The remaining risk is a retry with a different key, which the duplicate capture
detector (PAY-106) catches after the fact.

Rollout: behind the flag payments.capture_idempotency, on for 5% of merchants for two days, then 50%, then
everyone. The reconciliation job (PAY-104) runs hourly during the rollout instead of nightly.

Open question from refinement: merchants that capture from their own back office through our API
sometimes send their own Idempotency-Key. We keep theirs as the outer key for the API request and still
derive ours for the gateway call, so a merchant retry and a worker retry cannot combine into two captures.

Out of scope: refunds and voids get the same treatment in a follow-up; they did not cause customer impact.
""",
        cl=["duplicate-charges"], who="bob", st="in_progress", pr="urgent",
        labels=["idempotency", "retry", "sev2-followup"],
        docs=["payments-retry-idempotency-design", "adr-021-idempotency-keys-in-postgres", "gateway-integration-guide"],
        code=["services/payments/capture.py", "services/payments/idempotency.py",
              "migrations/payments/0042_idempotency_keys.sql"],
        sig=["duplicate-charges-1", "duplicate-charges-4", "edge-proxy-tls"], dep=["PAY-105"],
        done=[
            "Every capture request carries an Idempotency-Key header",
            "A timeout leads to a status lookup by key, never a blind retry",
            "The staging chaos test (gateway drops 30% of responses) produces zero duplicate captures",
            "Rollout flag payments.capture_idempotency documented in the runbook",
        ],
    ),
    W(
        "PAY-102", "Refund duplicate charges from the 3 March incident",
        "Identify every order captured more than once on 3 March, refund the extra captures and notify the "
        "affected customers.",
        """
The reconciliation query found 412 orders with two captures and 37 with three, 41,880 EUR in total. Refund
the later captures (keep the first), tag the refunds with reason duplicate_capture_incident_0303 so finance
can report on them, and send the apology email with the refund reference. Merchants get a CSV of affected
orders. Follow the refund runbook; do not refund from the gateway dashboard by hand, it bypasses the ledger.
""",
        cl=["duplicate-charges"], who="jose", st="done", pr="urgent", labels=["refunds", "customer-impact"],
        docs=["runbook-refunding-duplicate-charges", "postmortem-duplicate-card-charges"],
        code=["services/payments/ledger.py"], sig=["duplicate-charges-3", "duplicate-charges-1"],
    ),
    W(
        "PAY-103", "Treat gateway timeouts as an unknown outcome, not a failure",
        "A read timeout from the card gateway says nothing about whether the capture happened. Model it as "
        "an unknown outcome that must be resolved before any retry.",
        """
The gateway client maps every exception to PaymentFailed, and the caller retries failures. Introduce an
explicit Outcome type (succeeded, declined, failed_before_send, unknown). Connection errors before the
request body is sent are safe to retry; timeouts and resets after sending are unknown. The capture service
resolves unknown outcomes by idempotency key (PAY-101) or, if the lookup also fails, parks the order for
the reconciliation job.
""",
        cl=["duplicate-charges"], who="bob", st="done", pr="urgent", labels=["gateway", "timeouts", "retry"],
        docs=["payments-retry-idempotency-design", "gateway-integration-guide"],
        code=["services/payments/gateway_client.py", "services/payments/capture.py"],
        sig=["gateway-timeouts", "duplicate-charges-1"],
    ),
    W(
        "PAY-104", "Nightly reconciliation of card captures against gateway settlements",
        "Compare the gateway's settlement report with our ledger every night and open a ticket for every "
        "capture that exists on one side only or twice on either side.",
        """
The settlement report arrives as a CSV on SFTP at 02:00 UTC. Match rows by gateway capture id, then by
idempotency key, then by (order id, amount). Mismatches go to the payments-reconciliation queue with both
sides attached. During the idempotency rollout the job runs hourly against the gateway's capture API.
""",
        cl=["duplicate-charges"], who="jose", st="done", pr="high", labels=["reconciliation", "ledger"],
        docs=["reconciliation-runbook", "payments-retry-idempotency-design"],
        code=["jobs/reconcile_captures.py", "services/payments/ledger.py"], sig=["reconciliation-mismatch"],
    ),
    W(
        "PAY-105", "Store idempotency keys with a 24-hour TTL",
        "Keep idempotency keys and the stored gateway responses for 24 hours in the payments database, "
        "with a unique index so two workers cannot claim the same key.",
        """
Table payment_idempotency_keys (key, merchant_id, state, request_hash, response, created_at, expires_at).
The unique index on (merchant_id, key) is the lock: INSERT ... ON CONFLICT DO NOTHING and check the row.
A request with a known key but a different request_hash is rejected with 422 (same key, different
payload). Expired keys are deleted in batches of 10,000 by a background job. See ADR 021 for why this
lives in Postgres and not Redis.
""",
        cl=["duplicate-charges"], who="bob", st="done", pr="high", labels=["idempotency", "database"],
        docs=["adr-021-idempotency-keys-in-postgres"],
        code=["services/payments/idempotency.py", "migrations/payments/0042_idempotency_keys.sql"],
    ),
    W(
        "PAY-106", "Duplicate capture detector alert",
        "Alert within five minutes when the same order is captured twice for the same amount, instead of "
        "learning about duplicate charges from support tickets.",
        """
A streaming query over the ledger events groups captures by (merchant, order, amount) in a 30-minute window.
More than one capture pages the payments on-call. On 3 March the detector existed only as a daily report,
which is why the first duplicate was noticed 50 minutes after it happened.
""",
        cl=["duplicate-charges"], who="jose", st="done", pr="high", labels=["alerting", "fraud"],
        docs=["runbook-refunding-duplicate-charges"], code=["services/payments/ledger.py"],
        sig=["duplicate-charges-2"],
    ),
    W(
        "PAY-107", "Support macro for duplicate charge questions",
        "Give support a macro and a lookup tool so they can confirm a duplicate charge and its refund "
        "status without escalating to engineering.",
        """
During the incident 230 tickets were escalated to payments engineers. The lookup tool shows captures,
refunds and their gateway references for an order; the macro explains pending refunds (5-10 business days
depending on the card issuer).
""",
        cl=["duplicate-charges"], who="jose", st="done", pr="medium", labels=["support"],
        docs=["runbook-refunding-duplicate-charges"], sig=["duplicate-charges-3"], dep=["PAY-102"],
    ),
    W(
        "PAY-108", "Idempotent handling of payment webhooks",
        "The gateway delivers webhooks at least once; process each event id once so a redelivered "
        "capture.succeeded event cannot create a second ledger entry.",
        """
Webhook handlers insert the event id into processed_webhook_events in the same transaction as their side
effects. Redeliveries hit the unique constraint and are acknowledged with 200. Signature verification
stays before the dedupe check so forged events cannot burn event ids.
""",
        cl=["duplicate-charges"], who="bob", st="in_review", pr="high", labels=["webhooks", "idempotency"],
        docs=["payments-retry-idempotency-design", "gateway-integration-guide"],
        code=["services/payments/webhooks.py"], dep=["PAY-105"],
    ),
    W(
        "PAY-109", "Ledger double-entry validation",
        "Reject ledger transactions whose entries do not sum to zero per currency, and report existing "
        "unbalanced transactions.",
        """
While refunding the duplicate charges we found 12 transactions where a capture had been written without
its balancing entry. Add a check constraint via a deferred trigger and a nightly report.
""",
        cl=["duplicate-charges", "payments-roadmap"], who="jose", st="open", pr="medium", labels=["ledger"],
        docs=["reconciliation-runbook"], code=["services/payments/ledger.py"], dep=["PAY-104"],
    ),
    # ---------------------------------------------------------------- acme PAY: checkout latency
    W(
        "PAY-110", "Move fraud scoring off the checkout critical path",
        "Checkout waits up to 1.2 s for the fraud score. Authorise the payment first, score asynchronously, "
        "and hold fulfilment (not the request) when the score comes back high.",
        """
Fraud scoring was added inline in checkout 2.7. The vendor's p95 is 700 ms and p99 1.2 s, and it is called
serially after pricing. Proposal: authorise only (no capture), publish an order.authorised event, score in
a worker, and capture or void based on the score. High-risk orders (about 0.4%) wait for manual review.
Card networks allow capture up to 7 days after authorisation, so there is room.
""",
        cl=["checkout-latency"], who="bob", st="in_progress", pr="urgent", labels=["latency", "fraud"],
        docs=["fraud-scoring-async-design", "checkout-architecture-overview"],
        code=["services/checkout/fraud_client.py", "services/checkout/handler.py"],
        sig=["checkout-latency-1", "checkout-latency-2"],
    ),
    W(
        "PAY-111", "Cache currency conversion rates",
        "Checkout fetches conversion rates from the treasury service on every call. Cache them for five "
        "minutes per currency pair.",
        """
The treasury service publishes rates every 15 minutes, so a 5-minute cache is safe. Rates used for a
checkout are stored with the order so that refunds use the same rate. Saves about 120 ms at p95.
""",
        cl=["checkout-latency"], who="jose", st="done", pr="high", labels=["latency", "caching"],
        docs=["checkout-architecture-overview"], code=["services/checkout/pricing.py"], sig=["checkout-latency-1"],
    ),
    W(
        "PAY-112", "Café checkout — ½ price bug",
        "Café orders paid with a loyalty card get the 50% loyalty discount twice: once on the basket and "
        "once on each drink line.",
        """
Reported by three café merchants (crème brûlée and flat white orders show up at a quarter of their price).
The pricing pipeline applies promotion rules at basket level and then again when it re-prices lines for
the receipt. Only café merchants use line-level loyalty rules, so nobody else sees it. Fix: price once,
keep the applied promotions on the line and make re-pricing idempotent.
""",
        cl=["checkout-latency", "payments-roadmap"], who="jose", st="in_review", pr="high",
        labels=["pricing", "bug", "unicode"],
        docs=["checkout-architecture-overview"], code=["services/checkout/pricing.py"], sig=["cafe-discount-feedback"],
    ),
    W(
        "PAY-113", "Checkout latency dashboard per dependency",
        "Break checkout latency down by dependency (pricing, fraud, gateway, inventory) so the next "
        "regression is visible within a deploy.",
        """
Add OpenTelemetry spans around each dependency call and a dashboard with p50/p95/p99 per span, annotated
with deploys. An alert fires when checkout p95 exceeds 1.5 s for 10 minutes.
""",
        cl=["checkout-latency"], who="fatima", st="done", pr="medium", labels=["observability", "latency"],
        docs=["runbook-checkout-latency"], code=["services/checkout/handler.py"], sig=["checkout-latency-1"],
    ),
    W(
        "PAY-114", "Connection pool exhaustion in the card gateway client",
        "The gateway client allows 20 connections per process; slow gateway responses exhaust the pool, "
        "requests queue, and queued requests time out and get retried.",
        """
This links both payment episodes: during the duplicate charges incident, pool exhaustion produced the
timeouts that triggered retries; during the checkout regression it added 300 ms of queueing at p95. Size
the pool from measured concurrency, add a pool wait timeout shorter than the request timeout, and export
pool metrics.
""",
        cl=["checkout-latency", "duplicate-charges"], who="bob", st="in_progress", pr="high",
        labels=["gateway", "latency", "retry"],
        docs=["gateway-integration-guide", "runbook-checkout-latency"],
        code=["services/payments/gateway_client.py"], sig=["gateway-timeouts"], dep=["PAY-103"],
    ),
    W(
        "PAY-115", "Timeout budget for checkout dependencies",
        "Give checkout a total deadline of 3 s and pass the remaining budget to every dependency instead "
        "of fixed per-call timeouts that add up to 11 s.",
        """
Propagate a deadline header; each client uses min(own timeout, remaining budget - 50 ms). When the budget
is exhausted checkout fails fast with a retryable error instead of hanging. Payment capture is excluded
once it has been sent: an unknown outcome is resolved by idempotency key, never abandoned.
""",
        cl=["checkout-latency"], who="bob", st="open", pr="medium", labels=["latency", "timeouts"],
        docs=["checkout-architecture-overview", "payments-retry-idempotency-design"],
        code=["services/checkout/handler.py", "services/payments/gateway_client.py"], dep=["PAY-113"],
    ),
    # ---------------------------------------------------------------- acme PAY: roadmap theme
    W(
        "PAY-116", "Support Apple Pay in checkout",
        "Accept Apple Pay on the web checkout and in the iOS app through the card gateway's network token "
        "support.",
        """
Merchant validation runs on our side with a per-merchant domain verification file. Network tokens are
captured like cards, with the same idempotency keys. Apple Pay is enabled per merchant.
""",
        cl=["payments-roadmap"], who="jose", st="open", pr="medium", labels=["payment-methods"],
        docs=["gateway-integration-guide"], code=["services/checkout/handler.py"],
    ),
    W(
        "PAY-117", "3-D Secure challenge flow for EU cards",
        "Strong customer authentication: run the 3-D Secure 2 challenge when the issuer asks for it, and "
        "use exemptions for low-value and low-risk transactions.",
        """
The gateway returns requires_action with a challenge URL. Checkout shows the issuer challenge in a modal
and resumes on the callback. Exemption requests use the fraud score, which is another reason to make
scoring fast (PAY-110).
""",
        cl=["payments-roadmap"], who="bob", st="in_progress", pr="high", labels=["sca", "compliance"],
        docs=["gateway-integration-guide", "pci-scope-review"], code=["services/checkout/handler.py"],
        dep=["PAY-110"],
    ),
    W(
        "PAY-118", "Chargeback evidence upload",
        "Let merchants upload delivery proof and correspondence for a chargeback, and submit it to the "
        "gateway before the deadline.",
        """
Chargebacks arrive as dispute.created webhooks. Show the deadline, the reason code and the required
evidence types; submit once, as the gateway accepts only one evidence package per dispute.
""",
        cl=["payments-roadmap"], who="jose", st="open", pr="low", labels=["chargebacks"],
        code=["services/payments/webhooks.py"], dep=["PAY-108"],
    ),
    W(
        "PAY-119", "Tax calculation for EU VAT",
        "Compute VAT per line from the buyer's country, the merchant's OSS registration and the product's "
        "tax category.",
        """
Rates come from a versioned table; the rate used is stored with the order. Reverse charge applies for B2B
buyers with a validated VAT id. Rounding is per line, half-even, in minor units.
""",
        cl=["payments-roadmap"], who="jose", st="in_progress", pr="medium", labels=["tax", "vat"],
        docs=["eu-vat-guide"], code=["services/checkout/pricing.py"],
    ),
    W(
        "PAY-120", "Refund status webhooks",
        "Notify merchants when a refund succeeds or fails at the gateway instead of having them poll.",
        """
Emit refund.succeeded and refund.failed to merchant endpoints with retries and exponential backoff. The
refund runbook links to the delivery log for support.
""",
        cl=["payments-roadmap"], who="bob", st="open", pr="low", labels=["webhooks", "refunds"],
        docs=["runbook-refunding-duplicate-charges"], code=["services/payments/webhooks.py"],
    ),
    W(
        "PAY-121", "Upgrade logging library",
        "Upgrade the structured logging library to the supported major version.",
        """
Payments services pin the old major version because of the card number masking processor. Port the
processor to the new API and keep the test that asserts no PAN ever reaches a log line.
""",
        cl=["payments-roadmap"], who="fatima", st="open", pr="low", labels=["chore", "dependencies"],
    ),
    W(
        "PAY-122", "Saved cards for returning customers",
        "Let returning customers pay with a saved card, stored as a gateway token, with CVC re-entry for "
        "high-risk orders.",
        """
We store only the gateway's card token, brand, last four digits and expiry. Expired cards are hidden. The
card updater service refreshes tokens for reissued cards monthly.
""",
        cl=["payments-roadmap"], who="jose", st="open", pr="medium", labels=["payment-methods"],
        docs=["pci-scope-review", "gateway-integration-guide"], code=["services/payments/capture.py"],
    ),
]  # fmt: skip

WORK += [
    # ---------------------------------------------------------------- acme SEARCH: relevance
    W(
        "SEARCH-101", "Add synonym dictionary to product search",
        "Expand queries with a curated synonym dictionary (sofa and couch, hoodie and sweatshirt) at "
        "query time, with lower weight for the expanded terms.",
        """
Index-time synonyms would force a full reindex for every dictionary change, so expansion happens at query
time. The dictionary is a versioned file reviewed by merchandising; one-way synonyms (tee -> t-shirt) are
supported. Expanded terms get a boost of 0.6 so exact matches still rank first.
""",
        cl=["relevance-tuning"], who="chen", st="done", pr="high", labels=["relevance", "synonyms"],
        docs=["search-ranking-design", "relevance-evaluation-guide"], code=["services/search/synonyms.py"],
        sig=["search-sofa-feedback", "search-zero-results"],
    ),
    W(
        "SEARCH-102", "Typo tolerance for short queries",
        "Allow one edit for query terms of five characters or more and none for shorter ones, so 'jaket' "
        "finds jackets but 'tee' does not match 'toe'.",
        """
Fuzzy matching on every term doubled query latency. Restrict it to terms of five or more characters,
prefix length 1, and skip terms that already match an index term exactly.
""",
        cl=["relevance-tuning"], who="zoe", st="done", pr="medium", labels=["relevance", "typo-tolerance"],
        docs=["search-ranking-design"], code=["services/search/analyzer.py"], sig=["search-zero-results"],
    ),
    W(
        "SEARCH-103", "Learning to rank from click feedback",
        "Train a gradient-boosted ranking model on anonymised click and add-to-cart feedback and use it to "
        "re-rank the top 200 results.",
        """
Features: BM25 scores per field, synonym match, in-stock flag, price percentile within the category,
historical click-through rate with a Bayesian prior, and recency. Labels come from clicks corrected for
position bias with an inverse propensity model. The first model (ltr-2026-04) improved NDCG@10 by 4.1
points offline and add-to-cart rate by 2.3% in the A/B test.
""",
        cl=["relevance-tuning"], who="chen", st="done", pr="high", labels=["relevance", "ltr", "ml"],
        docs=["adr-007-gradient-boosted-ltr", "search-ranking-design"],
        code=["services/search/ltr_features.py", "services/search/ranking.py"], sig=["ltr-model-deploy"],
        dep=["SEARCH-104"],
    ),
    W(
        "SEARCH-104", "Offline relevance evaluation set",
        "Build a judged set of 1,200 queries with graded relevance labels to compare ranking changes with "
        "NDCG@10 before any A/B test.",
        """
Queries are sampled from logs by frequency band (head, torso, tail) and category. Two annotators grade the
top 20 results of each query on a 0-3 scale; disagreements go to a third. The set is frozen per quarter so
numbers stay comparable.
""",
        cl=["relevance-tuning"], who="zoe", st="done", pr="medium", labels=["relevance", "evaluation"],
        docs=["relevance-evaluation-guide"],
    ),
    W(
        "SEARCH-105", "Boost in-stock products in search ranking",
        "Out-of-stock products rank as high as available ones. Demote them unless the query names the "
        "product exactly.",
        """
Apply a multiplicative factor of 0.5 to out-of-stock products, and 0.8 to products with fewer than three
units. Exact title matches are exempt so customers can still find a product to subscribe to a restock alert.
Depends on availability being fresh in the index, which the index lag incident showed it was not.
""",
        cl=["relevance-tuning"], who="chen", st="in_review", pr="medium", labels=["relevance", "availability"],
        docs=["search-ranking-design"], code=["services/search/ranking.py"], dep=["SEARCH-111"],
    ),
    W(
        "SEARCH-106", "Accent-insensitive matching: “crème brûlée” finds nothing",
        "Queries with accents do not match products indexed without them and vice versa. Fold accents in "
        "the analyzer for both indexing and queries.",
        """
French and German customers type accents (crème, Müsli, Zoë), merchants often do not. Add ASCII folding
with the original token preserved, so "creme" finds "crème" and an exact accented match still scores a
little higher. Requires a reindex with the new analyzer.
""",
        cl=["relevance-tuning"], who="zoe", st="in_progress", pr="high", labels=["relevance", "unicode", "analyzer"],
        docs=["search-ranking-design", "runbook-zero-downtime-reindex"], code=["services/search/analyzer.py"],
        sig=["search-accent-feedback"], dep=["SEARCH-110"],
    ),
    W(
        "SEARCH-107", "Personalised ranking experiment",
        "Test a small personalisation signal (preferred brands and sizes from the last 90 days) in the "
        "ranking model for signed-in users.",
        """
Personal features are computed in the session, never stored in the index. The experiment runs for two
weeks on 10% of signed-in traffic; success is add-to-cart rate without a drop in NDCG on the judged set.
""",
        cl=["relevance-tuning"], who="chen", st="open", pr="low", labels=["relevance", "experiment"],
        code=["services/search/ltr_features.py", "web/search/useSearch.ts"], dep=["SEARCH-103"],
    ),
    W(
        "SEARCH-108", "Query understanding for size and colour",
        "Recognise sizes and colours in queries ('red dress 38') and turn them into filters instead of "
        "free-text terms.",
        """
A small dictionary-based tagger per locale detects colours, sizes and materials. Tagged terms become
filters with a fallback to text matching when the filtered result set is empty.
""",
        cl=["relevance-tuning"], who="zoe", st="open", pr="medium", labels=["relevance", "query-understanding"],
        docs=["search-ranking-design"], code=["services/search/analyzer.py", "web/search/useSearch.ts"],
    ),
    # ---------------------------------------------------------------- acme SEARCH: index lag
    W(
        "SEARCH-109", "Search index lag after catalogue bulk import",
        "A bulk import of 2.3 million products put the indexing consumer six hours behind; search showed "
        "stale prices and availability until the backlog drained.",
        """
Timeline: the import started at 09:10 and published one change event per product attribute, 19 million
events in 40 minutes. The indexing consumer processes about 900 events per second, so the lag reached six
hours. Price changes from the checkout side queued behind the import, which is why customers saw prices
in search that checkout then refused.

Immediate actions taken: the import was paused at 11:30, and the consumer was scaled from 4 to 12
partitions' worth of workers, but the topic has only 8 partitions, so only 8 workers did anything.

Follow-ups: separate topics (or at least priorities) for bulk imports and live updates (SEARCH-111),
coalesce events per product before indexing, an alert on consumer lag (SEARCH-112), and a zero-downtime
rebuild path so a large import can go to a fresh index instead (SEARCH-110).
""",
        cl=["index-lag"], who="chen", st="done", pr="urgent", labels=["indexing", "incident"],
        docs=["postmortem-search-index-lag", "runbook-zero-downtime-reindex"],
        code=["services/search/indexer.py"], sig=["index-lag-1", "index-lag-2"],
    ),
    W(
        "SEARCH-110", "Index rebuild without downtime (alias swap)",
        "Rebuild the product index into a new versioned index and swap the read alias atomically, "
        "replaying live updates that arrived during the rebuild.",
        """
Steps: create products_vN with the new mapping, bulk load from the catalogue snapshot, record the Kafka
offset at snapshot time, replay from that offset, compare document counts and a sample of documents, then
swap the alias. Keep the old index for 24 hours for rollback.
""",
        cl=["index-lag", "relevance-tuning"], who="zoe", st="done", pr="high", labels=["indexing", "reindex"],
        docs=["runbook-zero-downtime-reindex"], code=["services/search/reindex.py", "services/search/indexer.py"],
    ),
    W(
        "SEARCH-111", "Back-pressure and priorities for the indexing consumer",
        "Live price and stock updates must never wait behind a bulk import. Split the topic by priority "
        "and coalesce updates per product.",
        """
Bulk imports publish to catalogue.bulk, live updates to catalogue.live; the consumer always drains live
first. Events for the same product within 2 seconds are coalesced into one index update. The importer
slows down when bulk lag exceeds 15 minutes.
""",
        cl=["index-lag"], who="chen", st="in_progress", pr="high", labels=["indexing", "back-pressure"],
        docs=["postmortem-search-index-lag"], code=["services/search/indexer.py"], sig=["index-lag-2"],
        dep=["SEARCH-109"],
    ),
    W(
        "SEARCH-112", "Alert on indexing consumer lag",
        "Page the search on-call when live update lag exceeds five minutes or bulk lag exceeds two hours.",
        """
Consumer lag is exported per topic and partition. The alert uses time lag (age of the oldest unprocessed
event), not message count, since a million coalescable events can be fine and a thousand stuck ones are not.
""",
        cl=["index-lag"], who="fatima", st="done", pr="medium", labels=["alerting", "indexing"],
        docs=["runbook-zero-downtime-reindex"], code=["services/search/indexer.py"], sig=["index-lag-2"],
    ),
    W(
        "SEARCH-113", "Stale prices in search results after checkout price changes",
        "Search shows the old price for up to an hour after a merchant changes it, and checkout then "
        "charges the new price. Payments and search need the same price source.",
        """
Checkout prices come from the pricing service; search reads the price from the index. When the indexing
consumer lags, the two disagree. Short term, the search result card shows the price from the pricing
service for the first page of results; long term, live price updates get the priority lane (SEARCH-111).
""",
        cl=["index-lag", "checkout-latency"], who="zoe", st="open", pr="high", labels=["indexing", "pricing"],
        code=["services/search/indexer.py", "services/checkout/pricing.py"], sig=["index-lag-1"],
        dep=["SEARCH-111", "PAY-111"],
    ),
    W(
        "SEARCH-114", "Upgrade logging library",
        "Upgrade the structured logging library to the supported major version.",
        """
The search services log query strings, which may contain personal data; the redaction processor must be
ported to the new API together with the upgrade, and the sampling of query logs kept at 1%.
""",
        cl=["relevance-tuning"], who="zoe", st="open", pr="low", labels=["chore", "dependencies"],
    ),
]  # fmt: skip

WORK += [
    # ---------------------------------------------------------------- globex CORE: session token expiry
    W(
        "CORE-101", "Tolerate clock skew when validating session tokens",
        "Session tokens are rejected as expired when the validating API node's clock runs ahead of the "
        "issuing node. Allow 60 seconds of leeway on exp, nbf and iat checks.",
        """
api-7 ran 94 seconds ahead after its NTP daemon lost its upstream. Tokens issued by other nodes looked
expired to api-7 up to 94 s early, and tokens it issued looked "not yet valid" to its peers. With a 60 s
leeway and the drift alert from CORE-103 the two problems cannot line up again. Leeway is configurable
per service, and tokens with iat in the future beyond the leeway are still rejected.
""",
        cl=["session-token-expiry"], who="gus", st="done", pr="urgent", labels=["auth", "session-tokens", "clock-skew"],
        docs=["session-token-lifecycle", "incident-review-early-session-expiry"],
        code=["core/auth/session_tokens.go", "core/auth/clock.go"], sig=["session-expiry-1", "session-expiry-2"],
    ),
    W(
        "CORE-102", "Token refresh endpoint for the mobile app",
        "The mobile app has no way to refresh a session token and sends users back to the login screen "
        "when it expires. Add a token refresh endpoint with rotating refresh tokens.",
        """
POST /v2/session/refresh takes a refresh token (30 days, rotated on every use) and returns a new session
token (1 hour) and refresh token. Refresh tokens are bound to the device id. The app refreshes in the
background five minutes before expiry, with jitter, and on the first 401.
""",
        cl=["session-token-expiry"], who="jo", st="done", pr="high", labels=["auth", "token-refresh", "mobile"],
        docs=["session-token-lifecycle", "adr-003-jwt-session-tokens"], code=["core/auth/refresh.go"],
        sig=["session-expiry-3"],
    ),
    W(
        "CORE-103", "NTP drift monitoring on API nodes",
        "Alert when any API node's clock drifts more than one second from the reference, and take the "
        "node out of the load balancer above ten seconds.",
        """
Export chrony's tracking offset as a metric. The health check fails when the absolute offset exceeds 10 s,
which drains the node. Clock drift on api-7 went unnoticed for four days before the incident.
""",
        cl=["session-token-expiry"], who="ivan", st="done", pr="high", labels=["monitoring", "ntp"],
        docs=["runbook-clock-drift"], code=["core/auth/clock.go"], sig=["session-expiry-2"],
    ),
    W(
        "CORE-104", "Extract user authentication from the monolith",
        "Move login, session tokens and token refresh out of the monolith into a dedicated auth service "
        "with its own database and signing keys.",
        """
The monolith issues and validates session tokens in-process, which is why every node needs a correct
clock and the signing secret. The auth service issues tokens signed with asymmetric keys, publishes a
JWKS, and every other service only verifies. Migration is per endpoint behind the auth_service_v2 flag.
""",
        cl=["session-token-expiry", "core-platform"], who="gus", st="in_progress", pr="medium",
        labels=["auth", "architecture"],
        docs=["session-token-lifecycle", "core-service-standards"],
        code=["core/auth/session_tokens.go", "core/auth/refresh.go"], dep=["CORE-102"],
    ),
    W(
        "CORE-105", "Refresh token rotation and reuse detection for mobile",
        "Rotate the mobile refresh token on every use and revoke the token family when an old refresh "
        "token is presented again, with a short grace period for lost responses.",
        """
Reuse of a rotated refresh token usually means theft, but on mobile it is mostly a retried request whose
response was lost. A 10-second grace period for the same device id avoids logging users out on flaky
networks. Reuse outside the grace period revokes every token of the family and is logged for security.
""",
        cl=["session-token-expiry"], who="jo", st="in_review", pr="high", labels=["auth", "token-refresh", "security"],
        docs=["session-token-lifecycle", "billing-security-review"], code=["core/auth/refresh.go"],
        dep=["CORE-102"],
    ),
    W(
        "CORE-106", "Fix race condition in token refresh",
        "Two API calls from the mobile app can refresh the same session at once; the second refresh "
        "fails because the refresh token was already rotated.",
        """
Same symptom as in many OAuth implementations: the app fires several requests after resuming from the
background, each gets a 401 and each tries to refresh. Server side, the grace period from CORE-105 returns
the already-issued pair; app side, refreshes are serialised behind one lock in the API client.
""",
        cl=["session-token-expiry"], who="jo", st="in_progress", pr="high", labels=["token-refresh", "race-condition"],
        docs=["session-token-lifecycle"], code=["core/auth/refresh.go"], sig=["session-expiry-3"],
        dep=["CORE-105"],
    ),
    # ---------------------------------------------------------------- globex CORE: retry storm
    W(
        "CORE-107", "Retry storm from internal clients after gateway restart",
        "After the 9 July gateway restart, internal services retried failed calls immediately and up to "
        "five times each, multiplying load by eight and keeping the gateway overloaded for 55 minutes.",
        """
What happened: a config push restarted all gateway pods within 90 seconds instead of rolling them. For
about 40 seconds every request failed with 503. The shared HTTP client in the internal SDK retries 503s
five times with a fixed 100 ms delay and no jitter. When the gateway came back, it received the original
traffic plus all retries, failed again under that load, and the cycle repeated. Health checks failed
under load, so the autoscaler kept replacing pods, which made things worse.

Why it lasted 55 minutes: nothing in the system reduced retries as the error rate grew. Operators had
to block internal traffic at the load balancer to let the gateway recover, then re-enable clients one
by one.

Fixes tracked separately: retry budgets in the SDK client (CORE-108), per-tenant and per-client rate limits
in the gateway (CORE-109), a circuit breaker for the heaviest caller, the billing API client (CORE-110),
and graceful shutdown so restarts drain instead of dropping requests (CORE-111).

Numbers for planning: normal internal traffic through the gateway is about 6,000 requests per second,
of which 2,100 come from billing (usage syncs and invoice rendering), 1,500 from the mobile backend and the
rest from smaller services. During the storm the gateway received up to 48,000 requests per second. The
billing API client alone retried 9,000 times per second, because its usage sync runs in 200 parallel
workers that each retried independently. Retries from the mobile backend were capped by the app's own
backoff and contributed little.

The incident review is restricted to the SRE group because it contains customer names and traffic data;
the summary above is safe to share.
""",
        cl=["retry-storm"], who="ivan", st="done", pr="urgent", labels=["incident", "retry", "gateway"],
        docs=["postmortem-retry-storm", "api-gateway-rate-limits"],
        code=["core/gateway/retry_budget.go", "core/gateway/ratelimit.go"],
        sig=["retry-storm-1", "retry-storm-2"],
    ),
    W(
        "CORE-108", "Retry budget for internal calls",
        "Limit retries to 10% of requests per client over a sliding window, with exponential backoff and "
        "full jitter, so retries can never multiply load during an outage.",
        """
Each client keeps a token bucket: every successful request adds 0.1 tokens, every retry costs one. When
the bucket is empty, failures are returned without retrying. Only idempotent methods are retried, and
503 responses with Retry-After are respected.
""",
        cl=["retry-storm"], who="gus", st="done", pr="urgent", labels=["retry", "resilience"],
        docs=["api-gateway-rate-limits", "core-service-standards"], code=["core/gateway/retry_budget.go"],
        sig=["retry-storm-2"], dep=["CORE-107"],
    ),
    W(
        "CORE-109", "Per-tenant rate limits in the API gateway",
        "Enforce request rate limits per tenant and per internal client in the gateway, returning 429 with "
        "Retry-After instead of letting overload turn into 503s.",
        """
Token buckets per (tenant, route class) are stored in the gateway's local memory and synchronised
approximately through Redis every second. Internal clients get their own quotas. Limits are configured
per plan; enterprise tenants can buy higher limits.
""",
        cl=["retry-storm"], who="gus", st="done", pr="high", labels=["rate-limit", "gateway"],
        docs=["api-gateway-rate-limits"], code=["core/gateway/ratelimit.go"], sig=["retry-storm-3"],
    ),
    W(
        "CORE-110", "Circuit breaker for the billing API client",
        "The billing service was the largest source of retries in the storm. Wrap its API client in a "
        "circuit breaker that opens after sustained failures.",
        """
The breaker opens at a 50% error rate over 20 requests and half-opens after 30 seconds. While open,
billing defers non-urgent work (invoice PDF rendering, usage syncs) to its queue instead of calling the
gateway.
""",
        cl=["retry-storm"], who="hana", st="in_progress", pr="high", labels=["resilience", "billing"],
        docs=["api-gateway-rate-limits"], code=["core/gateway/retry_budget.go", "billing/charge.py"],
        dep=["CORE-108"],
    ),
    W(
        "CORE-111", "Graceful shutdown for API nodes",
        "Stop accepting new connections on SIGTERM, finish in-flight requests for up to 25 seconds, then "
        "exit, so rolling restarts do not drop requests.",
        """
Pods receive SIGTERM while still in the load balancer for a few seconds, so the server first fails its
readiness check, waits 5 s, then drains. The gateway's config push is changed to a rolling restart with a
maximum of 10% unavailable.
""",
        cl=["retry-storm", "core-platform"], who="jo", st="done", pr="medium", labels=["reliability"],
        docs=["core-service-standards"], code=["core/platform/shutdown.go"], sig=["retry-storm-1"],
    ),
    # ---------------------------------------------------------------- globex CORE: platform theme
    W(
        "CORE-112", "Upgrade Go toolchain to 1.26",
        "Move every CORE service to Go 1.26 and remove the workarounds for the old HTTP/2 client bug.",
        """
Build images and CI runners first, then services in dependency order. Benchmarks of the gateway show a 6%
lower p99 with the new runtime. Deploy through the usual canary.
""",
        cl=["core-platform"], who="gus", st="done", pr="low", labels=["chore", "go"],
        docs=["core-service-standards"], code=["core/platform/flags.go"], sig=["go-upgrade-deploy"],
    ),
    W(
        "CORE-113", "Upgrade logging library",
        "Upgrade the structured logging library to the supported major version.",
        """
CORE services move from the old zap wrapper to log/slog. Field names stay the same so dashboards keep
working; the token redaction handler is ported and tested.
""",
        cl=["core-platform"], who="jo", st="in_progress", pr="low", labels=["chore", "logging"],
    ),
    W(
        "CORE-114", "Feature flags service",
        "Replace per-service flag files with a flags service that evaluates flags per tenant and user, "
        "with audit history.",
        """
Flags are evaluated locally from a snapshot streamed by the flags service, so a flags outage never blocks
requests. Every change is audited. The auth_service_v2 and retry budget rollouts are the first users.
""",
        cl=["core-platform"], who="gus", st="in_progress", pr="medium", labels=["feature-flags"],
        docs=["core-service-standards"], code=["core/platform/flags.go"],
    ),
    W(
        "CORE-115", "Database connection pool tuning",
        "API nodes open up to 100 Postgres connections each; during the failover the database hit its "
        "connection limit. Cap pools and add PgBouncer.",
        """
Measured concurrency per node is 12 at p99. Set max 20 connections per node, a 2 s acquire timeout and
transaction pooling through PgBouncer. Billing shares the cluster and gets its own pool budget.
""",
        cl=["core-platform"], who="ivan", st="open", pr="high", labels=["database", "reliability"],
        code=["core/db/pool.go"], sig=["db-failover"],
    ),
    W(
        "CORE-116", "Secrets rotation automation",
        "Rotate database passwords, API credentials and token signing keys automatically every 90 days, "
        "with overlap so nothing breaks during rotation.",
        """
Each secret type declares how to create the new version, how long both versions stay valid and how to
verify the switch. Signing keys follow the same publish-then-sign-then-retire pattern used for session
tokens.
""",
        cl=["core-platform"], who="ivan", st="open", pr="medium", labels=["secrets", "security"],
        docs=["session-token-lifecycle"], code=["core/auth/session_tokens.go"], dep=["CORE-104"],
    ),
    # ---------------------------------------------------------------- globex BILLING: invoice retries
    W(
        "BILLING-101", "Smart retry schedule for failed invoice payments",
        "Retry failed invoice payments on the customer's usual payday and avoid weekends, instead of the "
        "fixed 1, 3, 5 and 7 day schedule.",
        """
Analysis of 180,000 failed payments shows that insufficient-funds failures succeed 2.4x more often when
retried within two days after the day of the month the customer usually pays. Hard declines (stolen card,
closed account) are never retried. Maximum four attempts over 21 days, then the account moves to dunning.
""",
        cl=["invoice-retries"], who="hana", st="done", pr="high", labels=["billing-retry", "dunning"],
        docs=["billing-retries-and-dunning", "adr-009-payday-aware-retries"], code=["billing/retry_scheduler.py"],
        sig=["billing-deploy"],
    ),
    W(
        "BILLING-102", "Billing retry idempotency: never charge an invoice twice",
        "When the retry queue backed up, two workers picked up the same invoice and both charged it. Make "
        "every charge attempt idempotent per invoice and attempt number.",
        """
Timeline: the retry queue reached 14,000 jobs on 8 July after the payment provider slowed down. Jobs have
a visibility timeout of 5 minutes; many charge calls took longer, so the queue made the same job visible
again and a second worker charged the same invoice. 214 invoices were charged twice.

Fix, in three layers:

1. Every charge call sends an idempotency key invoice_id:attempt_number to the payment provider. The
   provider deduplicates for 24 hours, so a second call with the same key returns the first result.
2. A charge_attempts table with a unique (invoice_id, attempt_number) constraint is written before the
   call; a worker that fails to insert knows someone else owns the attempt.
3. The visibility timeout becomes 15 minutes and workers extend it while a charge is in flight.

Also: the double charge guard (a check for a successful charge on the same invoice within 24 hours) stays
as a last line of defence; it blocked 37 duplicates during the backlog and should page when it fires.

Why the existing dedupe did not help: the worker checked "is this invoice already paid?" before charging,
but both workers read the invoice before either charge completed, so both saw it unpaid. A read-then-act
check cannot protect against concurrent workers; only the unique constraint on the attempt and the
provider-side idempotency key do.

Migration: charge_attempts is backfilled from the provider's charge list for the last 30 days, so that
in-flight invoices already have their earlier attempts recorded when the new code starts. The backfill is
idempotent itself and can be re-run.

Refunds for the 214 invoices went out on 10 July; customer success has the list.
""",
        cl=["invoice-retries"], who="soren", st="done", pr="urgent", labels=["billing-retry", "idempotency"],
        docs=["billing-retries-and-dunning", "runbook-stuck-invoice-retries"],
        code=["billing/charge.py", "billing/retry_scheduler.py"], sig=["invoice-retries-4", "invoice-retries-1"],
        done=[
            "Two workers processing the same job produce exactly one charge (integration test)",
            "Provider idempotency key invoice_id:attempt_number on every charge call",
            "Double charge guard pages the billing on-call",
        ],
    ),
    W(
        "BILLING-103", "Dunning email templates",
        "Three reminder emails before an account is suspended, with a direct link to update the payment "
        "method, localised in six languages.",
        """
Day 0: payment failed, we will retry. Day 7: second failure, please update your card. Day 14: final notice
with the suspension date. Each email links to the billing portal with a signed, single-use token.
""",
        cl=["invoice-retries"], who="hana", st="done", pr="medium", labels=["dunning", "email"],
        docs=["billing-retries-and-dunning"], code=["billing/dunning.py"],
    ),
    W(
        "BILLING-104", "Stop duplicate dunning emails",
        "Customers received the same dunning email two or three times when retries were re-queued. Send "
        "each dunning step at most once per invoice.",
        """
Dunning steps are recorded in dunning_events with a unique (invoice_id, step) constraint and the email is
sent only after the insert succeeds. Re-queued retries no longer restart the dunning sequence.
""",
        cl=["invoice-retries"], who="soren", st="done", pr="high", labels=["dunning", "idempotency"],
        docs=["billing-retries-and-dunning"], code=["billing/dunning.py"], sig=["invoice-retries-2"],
        dep=["BILLING-102"],
    ),
    W(
        "BILLING-105", "Stuck invoice retry queue",
        "The invoice retry queue grew past 10,000 jobs and stopped draining; find why workers stalled and "
        "add a runbook for draining it safely.",
        """
Workers blocked on the payment provider's slow responses with a 60 s client timeout and no concurrency
limit per provider. Add a per-provider concurrency cap, a 20 s timeout and queue depth alerts. The runbook
covers pausing retries, draining in batches, and checking the double charge guard afterwards.
""",
        cl=["invoice-retries"], who="ivan", st="done", pr="high", labels=["queue", "billing-retry"],
        docs=["runbook-stuck-invoice-retries", "billing-oncall-handbook"], code=["billing/retry_scheduler.py"],
        sig=["invoice-retries-1", "db-failover"],
    ),
    W(
        "BILLING-106", "Card updater integration to reduce failed renewals",
        "Use the payment provider's card updater to refresh expired or reissued cards before renewal "
        "instead of failing the first charge.",
        """
Run the updater seven days before renewal for cards that expire this month. Updated cards replace the
stored payment method token; the customer gets a notification that their card details were refreshed.
""",
        cl=["invoice-retries"], who="hana", st="open", pr="medium", labels=["renewals", "payment-methods"],
        docs=["billing-retries-and-dunning"], code=["billing/charge.py"], dep=["BILLING-107"],
    ),
    W(
        "BILLING-107", "Payment provider token expiry breaks renewals",
        "Stored payment method tokens from the old provider integration expire after 13 months; renewals "
        "with an expired token fail as hard declines and skip the retry schedule.",
        """
On 15 July 3,100 renewals failed within an hour with error token_expired, classified as a hard decline, so
no retry was scheduled and customers went straight to dunning. Re-tokenise stored cards through the
provider's migration API, classify token_expired as retryable after re-tokenisation, and alert on spikes
of any single decline code.
""",
        cl=["invoice-retries"], who="soren", st="in_progress", pr="urgent", labels=["renewals", "token", "incident"],
        docs=["billing-security-review", "runbook-stuck-invoice-retries"], code=["billing/charge.py"],
        sig=["invoice-retries-3"],
    ),
    # ---------------------------------------------------------------- globex BILLING: tax and invoicing
    W(
        "BILLING-108", "Invoices for Zürich customers show the wrong VAT rate (MwSt.)",
        "Swiss invoices still use the 7.7% rate that changed to 8.1% on 1 January 2024, because the tax "
        "table for CH was not versioned by date.",
        """
Customers in Zürich and Genève reported it; the finance team confirmed 1,140 invoices since January. Tax
rates become effective-dated rows; the invoice stores the rate it used. Affected invoices get a correction
invoice with the difference, not a silent re-issue.
""",
        cl=["tax-invoicing"], who="soren", st="in_progress", pr="high", labels=["tax", "vat", "unicode"],
        docs=["vat-rules-switzerland"], code=["billing/tax/vat.py"], sig=["vat-zurich-feedback"],
    ),
    W(
        "BILLING-109", "Proration on plan changes",
        "Charge or credit the exact difference when a customer changes plan mid-cycle, to the second, "
        "instead of at the next renewal.",
        """
Proration uses the seconds remaining in the period. Upgrades are charged immediately with the same
idempotent charge path as retries; downgrades create a credit for the next invoice.
""",
        cl=["tax-invoicing"], who="hana", st="done", pr="medium", labels=["proration"],
        docs=["proration-design"], code=["billing/proration.py"],
    ),
    W(
        "BILLING-110", "Multi-currency invoices",
        "Invoice customers in EUR, CHF, GBP and USD, with the exchange rate fixed at the invoice date and "
        "shown on the invoice.",
        """
Prices are set per currency, not converted, for the four main currencies. Tax amounts are computed in the
invoice currency and rounded per line.
""",
        cl=["tax-invoicing"], who="hana", st="open", pr="medium", labels=["currency", "invoices"],
        docs=["invoice-rendering-guide"], code=["billing/invoices/render.py", "billing/tax/vat.py"],
    ),
    W(
        "BILLING-111", "Tax IDs on invoices",
        "Collect and validate customer tax ids (EU VAT, Swiss UID, UK VAT) and print them on invoices; "
        "apply reverse charge where it applies.",
        """
Validation uses VIES for EU numbers and the UID register for Swiss ones, with a cached result for 30 days.
A failed validation never blocks checkout; the invoice is issued with VAT and corrected later.
""",
        cl=["tax-invoicing"], who="soren", st="open", pr="low", labels=["tax", "invoices"],
        docs=["vat-rules-switzerland"], code=["billing/tax/vat.py"], dep=["BILLING-108"],
    ),
    W(
        "BILLING-112", "Invoice PDF rendering is slow",
        "Rendering an invoice with 2,000 usage lines takes 20 seconds and times out in the billing portal.",
        """
The HTML template re-computes totals per line and embeds the full font for every page. Pre-compute totals,
subset fonts, and render large invoices asynchronously with a download link.
""",
        cl=["tax-invoicing"], who="hana", st="in_progress", pr="medium", labels=["performance", "invoices"],
        docs=["invoice-rendering-guide"], code=["billing/invoices/render.py"], sig=["invoice-render-slow"],
    ),
    # ---------------------------------------------------------------- globex BILLING: upkeep theme
    W(
        "BILLING-113", "Usage-based billing meters",
        "Meter API calls and storage per customer and bill them monthly with tiered pricing.",
        """
Usage events are aggregated hourly into meters; invoices read the monthly totals. Late events within 72
hours are included, later ones go to the next invoice.
""",
        cl=["billing-upkeep"], who="soren", st="in_progress", pr="medium", labels=["usage", "metering"],
        docs=["proration-design"], code=["billing/proration.py"],
    ),
    W(
        "BILLING-114", "Credit notes for refunds",
        "Issue a credit note for every refund, linked to the original invoice, so refunds are visible in "
        "accounting exports.",
        """
Credit notes get their own number sequence per country. The 214 refunds after the duplicate invoice
charges were issued without credit notes and need them retroactively.
""",
        cl=["billing-upkeep"], who="hana", st="open", pr="medium", labels=["refunds", "accounting"],
        docs=["invoice-rendering-guide"], code=["billing/invoices/render.py"], dep=["BILLING-102"],
    ),
    W(
        "BILLING-115", "Billing portal for customers",
        "Let customers download invoices, update their payment method and see upcoming charges without "
        "contacting support.",
        """
The portal uses the same signed links as dunning emails for passwordless access and the main login for
everything else. Updating the payment method triggers an immediate retry of open invoices.
""",
        cl=["billing-upkeep"], who="soren", st="done", pr="high", labels=["portal"],
        docs=["billing-retries-and-dunning"], code=["billing/dunning.py"], dep=["BILLING-103"],
    ),
    W(
        "BILLING-116", "Billing emails localisation",
        "Translate invoices and billing emails into German, French, Italian and Danish, with number and "
        "date formats per locale.",
        """
Strings move to the translation platform; amounts use CLDR formats (1’234.50 CHF in de-CH). Danish is new
and needs legal review of the dunning texts.
""",
        cl=["billing-upkeep"], who="hana", st="open", pr="low", labels=["i18n", "email"],
        code=["billing/dunning.py"],
    ),
]  # fmt: skip


def D(  # noqa: N802 (a short constructor for the tables below)
    tenant: str,
    project: str,
    slug: str,
    title: str | None,
    kind: str,
    owner: str,
    body: str,
    *,
    acl: tuple[str, ...] | list[str] = (),
    cl: tuple[str, ...] | list[str] = (),
    refs: tuple[str, ...] | list[str] = (),
    documents: tuple[str, ...] | list[str] = (),
    reviewed: str = "",
    node_id: str | None = None,
) -> dict[str, Any]:
    """One doc. A non-empty acl makes it secured. refs: doc slugs; documents: code paths."""
    return {
        "tenant": tenant, "project": project, "slug": slug, "title": title, "kind": kind, "owner": owner,
        "body": body.strip(), "acl": list(acl), "clusters": list(cl), "refs": list(refs),
        "documents": list(documents), "reviewed": reviewed, "id": node_id or f"{tenant}:doc:{slug}",
    }  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Docs (markdown bodies). A footer with owner and review month is appended to each body.
# ----------------------------------------------------------------------------------------------
DOCS: list[dict[str, Any]] = [
    # ---------------------------------------------------------------- acme AUTH
    D(
        "acme", "AUTH", "token-refresh-design", "Token refresh design", "design", "identity",
        """
# Token refresh design

This document describes how acme clients keep a session alive with OAuth 2.0 access tokens and rotating
refresh tokens, and how the token refresh endpoint behaves under concurrency. It was revised after the
March token refresh outage; the changes are marked "(since 2026-03)".

## Context

Access tokens are JWTs signed with RS256, valid for 15 minutes. They are verified locally by every service
using the keys published at /.well-known/jwks.json. Refresh tokens are opaque, 256-bit random strings,
valid for 30 days of inactivity, and stored only as SHA-256 hashes in the refresh_tokens table. Each
refresh token belongs to a token family that starts at login; rotating a token keeps the family.

## Goals

- A user stays signed in as long as they are active, on any number of tabs and devices.
- A stolen refresh token is useless once the legitimate client has used it (rotation plus reuse detection).
- The token endpoint survives a mass refresh, for example after a signing key rotation.

## Refresh flow

1. The client notices the access token expires soon (between 80% and 95% of its lifetime, randomised,
   since 2026-03) or receives a 401.
2. It calls POST /oauth/token with grant_type=refresh_token, its client id and the refresh token.
3. The token service redeems the refresh token atomically: a single UPDATE sets consumed_at where the hash
   matches and consumed_at is null (since 2026-03; before, it was a read followed by a write).
4. On success it issues a new access token and a new refresh token in the same family.

## Concurrency and the grace window (since 2026-03)

Two refreshes of the same token can legitimately race: several tabs, an SDK that refreshes per request, or
a retried request whose response was lost. The loser of the race used to be treated as token reuse, which
revokes the family and logs the user out everywhere. That is what turned a key rotation into an outage.

Now the token service remembers the response of a successful redemption for 10 seconds, keyed by the old
token hash. A second redemption within that window, from the same client id and device binding, gets the
same response and is logged with reason concurrent_refresh. Anything else is still reuse.

Clients must also single-flight their refreshes: the web session manager shares one in-flight refresh
across tabs through a BroadcastChannel, and the mobile SDK uses a mutex with a re-check after acquiring it.

## Reuse detection

Presenting a consumed refresh token outside the grace window revokes the whole family, writes an audit
event and notifies the user by email. Security reviews the reuse rate weekly; a sudden increase means
either an attack or a client regression.

## Key rotation

Signing keys rotate every 30 days. The new key is published first, used for signing after one JWKS cache
lifetime, and the previous key stays available for verification until every token it signed has expired.
See the key rotation runbook for the procedure.

## Metrics

- auth_refresh_total by result (ok, expired, reused, concurrent_refresh, invalid_signature)
- auth_refresh_duration_seconds histogram
- auth_token_family_revocations_total by reason

## Open questions

- Should the grace window be configurable per client? Mobile clients on slow networks may need longer.
- Do we bind refresh tokens to a DPoP key for public clients? Tracked in the threat model.
""",
        cl=["token-refresh-outage"], refs=["auth-service-architecture", "runbook-auth-service-key-rotation"],
        documents=["services/auth/token_refresh.py", "services/auth/refresh_store.py"],
        reviewed="2026-04",
    ),
    D(
        "acme", "AUTH", "postmortem-oauth-token-refresh-outage", "Postmortem: OAuth token refresh outage",
        "postmortem", "security",
        """
# Postmortem: OAuth token refresh outage (SEV1, 14 March)

This postmortem covers the token refresh incident of 14 March. For 41 minutes, token refresh failed: refresh
tokens were rejected as reused, token families were revoked, and about 18% of active sessions (41,000
users) were logged out of web and mobile. The postmortem is restricted to the security group because it
describes refresh token reuse detection and its weaknesses in detail; the token refresh design and the
runbooks hold the public parts.

## In one paragraph

A signing key rotation invalidated every access token at once, every client started a token refresh at
the same moment, and concurrent refreshes of the same refresh token were treated as token reuse, which
revoked the session. Details below.

## Impact

- 09:12 to 09:53 UTC: refresh token rejection rate between 12% and 31%.
- 41,000 sessions revoked; users had to sign in again, and 6% of them had MFA prompts on every device.
- 2,300 support tickets; checkout conversion down 9% during the window.
- No data was exposed and no account was taken over.

## Timeline (UTC)

- 09:05 auth-service 4.12.0 deployed with the automated signing key rotation job enabled.
- 09:10 The rotation job publishes the new key and deletes the previous key in the same step.
- 09:11 Every service fails to verify access tokens signed with the deleted key and returns 401.
- 09:11 Clients refresh en masse: 30x normal refresh traffic.
- 09:12 Concurrent refreshes of the same session race; losers are treated as token reuse; families revoked.
- 09:17 Customer reports reach support; the 5xx alert does not fire because rejections are 400s.
- 09:31 Generic error-rate alert fires; identity on-call engaged.
- 09:38 The deleted key is restored from the key store backup and re-published.
- 09:44 Reuse detection switched to log-only with the kill switch auth.reuse_detection.enforce=false.
- 09:53 Rejection rate back to baseline.

## Root cause

Two independent defects combined:

1. The key rotation job retired the previous signing key immediately instead of keeping it for
   verification until tokens signed with it expire. All access tokens became invalid at once.
2. Redeeming a refresh token was a read followed by a write. Two concurrent refreshes of the same token
   both read it as unused; the second write saw the token consumed and took the reuse path, revoking the
   family. Under normal load this happens a few times per hour and goes unnoticed; under a mass refresh it
   happened to 18% of sessions.

Contributing factors: clients refresh exactly at expiry with no jitter; the Android SDK refreshes once per
failed request; no alert existed for refresh rejections; the load test never refreshed one session twice.

## What went well

- Restoring the key from backup worked on the first attempt.
- The reuse detection kill switch existed and was documented.

## What went badly

- It took 19 minutes to page anyone. Customers told us first.
- The rotation job had no dry-run mode and was enabled together with an unrelated release.

## Action items

| action | ticket | status |
| --- | --- | --- |
| Atomic refresh token redemption and a grace window for concurrent refresh | AUTH-101 | in review |
| Jittered refresh scheduling in web and SDK clients | AUTH-102 | done |
| Keep the previous signing key for verification during rotation | AUTH-103 | done |
| Alert on refresh token rejection rate | AUTH-104 | done |
| Restore revoked sessions and notify users | AUTH-105 | done |
| Grace window policy agreed with security | AUTH-106 | in progress |
| Load test with concurrent refreshes and a key rotation | AUTH-107 | open |
| Single-flight refresh in the mobile SDK | AUTH-108 | in progress |

## Lessons

A defensive mechanism (reuse detection) turned a partial outage into a full one. Every mechanism that
revokes access must be tested under the load pattern of an incident, not only in steady state.
""",
        acl=["group:security", "user:alice"], cl=["token-refresh-outage"],
        refs=["token-refresh-design", "runbook-auth-service-key-rotation", "runbook-token-refresh-errors"],
        documents=["services/auth/token_refresh.py", "services/auth/keys.py"], reviewed="2026-03",
    ),
    D(
        "acme", "AUTH", "runbook-auth-service-key-rotation", "Runbook: auth service key rotation", "runbook",
        "identity",
        """
# Runbook: auth service key rotation

Use this runbook to rotate the RS256 signing keys of the auth service, either on the 30-day schedule or
after a suspected key compromise. The automated job follows the same steps; use this page when the job
fails or when rotating by hand.

## Before you start

- Check the JWKS endpoint lists exactly two keys: "current" and "next". Three or more means a previous
  rotation did not finish.
- Check the auth dashboard: refresh rejection rate below 0.5%, token endpoint p99 below 300 ms.
- Announce the rotation in #identity-oncall.

## Steps

1. Dry run: authctl keys rotate --dry-run. It prints the key ids it will publish, promote and retire.
2. Publish: authctl keys publish-next. Wait at least 10 minutes (one JWKS cache lifetime) so every
   verifier has the next key cached.
3. Promote: authctl keys promote. New tokens are signed with the promoted key. The old key becomes
   "previous" and is still used for verification.
4. Wait 20 minutes: access token lifetime (15 minutes) plus clock leeway.
5. Retire: authctl keys retire-previous.

Never run promote and retire in one step. Retiring a key that still verifies live tokens logs everybody
out; this is exactly what caused the March token refresh outage.

## Verification

- auth_refresh_total{result="invalid_signature"} stays at zero.
- The JWKS endpoint lists the promoted key and, until retirement, the previous key.

## Rollback

If verification errors appear after promote, run authctl keys demote: the previous key becomes current
again. After retire, restore the key from the key store backup with authctl keys restore KEY_ID.

## Emergency rotation (key compromise)

Skip the waiting periods, accept that all sessions are revoked, and enable the login banner explaining the
forced sign-out. Page security before starting.
""",
        cl=["token-refresh-outage"], refs=["token-refresh-design"], documents=["services/auth/keys.py"],
        reviewed="2026-03",
    ),
    D(
        "acme", "AUTH", "runbook-token-refresh-errors", "Runbook: token refresh errors", "runbook", "identity",
        """
# Runbook: token refresh errors

Alert: AuthRefreshRejectionRateHigh (refresh token rejections above 2% for 5 minutes), or support reports
of users being logged out repeatedly.

## Diagnose

Open the token refresh dashboard and look at auth_refresh_total broken down by result:

- invalid_signature: a signing key problem. Check the JWKS endpoint and the last key rotation. Go to the
  key rotation runbook.
- reused: refresh tokens presented twice. A sudden rise usually means a client regression (a new SDK
  version that refreshes per request) or concurrent refreshes outside the grace window. Check the client
  version breakdown. A rise from a single IP range may be an attack: page security.
- expired: users returning after 30 days of inactivity. Only worrying if it jumps, which would mean the
  expiry configuration changed.
- concurrent_refresh: not an error; the grace window absorbed a race.

## Mitigate

- Signing key problem: restore or re-publish the previous key.
- Mass family revocations: set auth.reuse_detection.enforce=false (log-only) for at most one hour and tell
  security. Re-enable as soon as the cause is fixed.
- Client regression: roll back the SDK feature flag for the affected version.

## Escalate

Identity on-call first; security when reuse is involved; SRE when the token endpoint itself is slow.
""",
        cl=["token-refresh-outage"], refs=["runbook-auth-service-key-rotation", "token-refresh-design"],
        documents=["services/auth/token_refresh.py"], reviewed="2026-04",
    ),
]  # fmt: skip

DOCS += [
    D(
        "acme", "AUTH", "auth-service-architecture", "Auth service architecture", "design", "identity",
        """
# Auth service architecture

This is the reference description of acme's authentication and authorisation stack: what runs where, which
tokens exist, how they are issued, verified, refreshed and revoked, and which team owns each part. It is
long on purpose; read the summary first and jump to the section you need.

## Summary

- One auth service (services/auth) issues every credential: browser sessions, OAuth access and refresh
  tokens for first-party and third-party clients, API tokens for integrations, and service account tokens.
- Every other service verifies access tokens locally with the public keys from the JWKS endpoint. Nothing
  calls the auth service on the request path except login, token refresh and revocation checks for
  high-risk actions.
- Identity data lives in the identity Postgres cluster (users, credentials, token families, audit events).
  Rate limiting and short-lived state (MFA challenges, WebAuthn ceremonies) live in Redis.
- Enterprise customers sign in through SSO (SAML today, OIDC from 2026). Everyone else uses email and
  password plus an optional second factor, which becomes mandatory for admins.

## Components

### Login handler

Serves the login pages and the password step. After a correct password it issues a short-lived
mfa_challenge token when a second factor is required, or a session otherwise. Login attempts are
rate-limited per IP and per account (sliding windows in Redis). The handler never sees SSO passwords:
SSO logins are redirected to the identity provider and come back as an assertion or an authorisation code.

### Token service

Implements the OAuth 2.0 token endpoint (POST /oauth/token) with the authorization_code, refresh_token and
client_credentials grants, plus the token exchange grant used by CI workload identity federation. Access
tokens are JWTs (RS256, 15 minutes). Refresh tokens are opaque, rotated on every use and grouped in token
families; reuse of a consumed refresh token outside a 10-second grace window revokes the family.

### Key manager

Generates and rotates signing keys every 30 days and publishes them at /.well-known/jwks.json. A rotation
has three phases (publish next, promote, retire previous) with waiting periods between them, so a verifier
always knows every key that signed a live token. Private keys are stored in the KMS-backed key store and
never leave the auth service.

### Session manager (web)

A small library in the storefront that holds the access token in memory and the refresh token in an
HttpOnly, SameSite=strict cookie scoped to the token endpoint. It schedules refreshes with jitter and
shares one in-flight refresh across tabs.

### Mobile SDK

Android and iOS SDKs store the refresh token in the platform keystore, refresh with a single in-flight
request per session, and expose an authenticated HTTP client to the apps.

### SSO connectors

One connector per enterprise connection: SAML 2.0 (service provider initiated, signed assertions required)
or OIDC (authorization code flow with PKCE). Connectors map IdP attributes or claims to acme users and
groups, optionally provisioning users just in time.

### Audit log

Append-only events for logins, second-factor enrolments, role changes, SSO configuration changes, API token
creation and token family revocations. Exported daily to the SIEM and visible to workspace admins.

## Tokens at a glance

| token | format | lifetime | where it lives | revocation |
| --- | --- | --- | --- | --- |
| access token | JWT, RS256 | 15 min | memory (web), keystore (mobile) | expiry only |
| refresh token | opaque, 256 bit | 30 days idle | HttpOnly cookie, keystore | family revocation |
| mfa_challenge | JWT, audience mfa | 2 min | login page state | single use |
| API token | opaque, prefixed acme_pat_ | up to 1 year | customer systems | immediate |
| service account token | JWT | 15 min | CI job | expiry only |
| trusted device cookie | opaque id | 30 days | browser cookie | admin revocation |

## Request path

A request to any acme API carries an access token in the Authorization header. The API gateway verifies the
signature against the cached JWKS, checks exp, nbf and audience with 30 seconds of clock leeway, and passes
the verified claims (subject, workspace, roles, authentication methods) to the service as headers. Services
trust those headers only from the gateway (mutual TLS between gateway and services).

High-risk actions (changing roles, SSO settings, payment details, exporting data) additionally require a
recent authentication: the access token's auth_time must be within 10 minutes and the amr claim must
include a second factor for admins.

## Token refresh

Clients refresh before expiry at a randomised point and on a 401. The refresh is atomic on the server (a
compare-and-set on the refresh token row) and tolerant to concurrent refreshes within the grace window. See
the token refresh design for the details and the reasoning; that document also lists the metrics.

## Revocation

Access tokens are not revocable individually; they expire within 15 minutes. Revoking a session revokes
its token family, so the next refresh fails. For immediate effect on high-risk actions, services call the
revocation check endpoint, which answers from a Redis set of revoked family ids (kept for 15 minutes).

## Data model

- users (id, email, email_verified, password_hash Argon2id, created_at, disabled_at)
- credentials (user_id, type password|webauthn|totp|recovery_code, data, created_at, last_used_at)
- token_families (id, user_id, client_id, device_binding, created_at, revoked_at, revoked_reason)
- refresh_tokens (token_hash, family_id, issued_at, consumed_at, expires_at)
- sso_connections (id, workspace_id, protocol, config, status)
- audit_events (id, actor, action, target, before, after, ip, user_agent, at)

## Availability and capacity

The auth service runs in three zones with at least six replicas. The token endpoint is sized for 30x the
normal refresh rate, which is what a mass refresh after a key problem produces; the March outage showed
that the previous sizing (5x) was not enough once clients started retrying. The login handler degrades to
password-only (no risk scoring) if the risk service is down. If Redis is unavailable, rate limiting fails
open with an alert, and MFA challenges fall back to Postgres.

## Security properties

- Passwords are hashed with Argon2id (m=64 MiB, t=3, p=1) and checked against a breached-password list.
- Refresh tokens are stored hashed; a database leak does not yield usable tokens.
- Token reuse detection limits the value of a stolen refresh token to the time before the legitimate
  client next refreshes.
- Private signing keys never leave the key store; rotation is automated and rehearsed.
- All secrets in logs are redacted by the logging processor (tokens, cookies, authorization headers).

## Observability

Dashboards: login funnel, token endpoint (rate, latency, results), key rotation status, SSO connection
health, MFA enrolment. Alerts page the identity on-call; security is paged for reuse spikes and for
credential stuffing patterns detected by the rate limiter.

## Ownership

The identity team owns the auth service, the SDK authentication modules and the session manager. Security
owns the threat model, the reviews, and the decision on reuse detection policies. SRE owns capacity and the
dashboards.

## History

- 2024: auth service extracted from the storefront monolith.
- 2025: rotating refresh tokens and reuse detection introduced.
- 2026-03: token refresh outage; atomic redemption, grace window and safer key rotation.
- 2026-Q2: MFA rollout and the SAML to OIDC migration for enterprise SSO.

## Glossary

- Token family: all refresh tokens descending from one login; revoked together.
- Grace window: the 10 seconds in which a second redemption of the same refresh token by the same client
  returns the same result instead of counting as reuse.
- JWKS: JSON Web Key Set, the public keys used to verify access tokens.
- amr: authentication methods reference, the claim that says how the user authenticated.
""",
        cl=["token-refresh-outage", "auth-hardening"],
        refs=["token-refresh-design", "runbook-auth-service-key-rotation", "sso-oidc-migration-plan",
              "mfa-enrolment-guide"],
        documents=["services/auth/token_refresh.py", "services/auth/login_handler.py"],
        reviewed="2026-05",
    ),
    D(
        "acme", "AUTH", "mfa-enrolment-guide", "MFA enrolment guide", "guide", "identity",
        """
# MFA enrolment guide

This guide is for workspace members and admins. It explains how to add a second factor to an acme account,
what to do when you lose it, and what admins can enforce.

## Supported second factors

- Security keys and built-in authenticators (WebAuthn): YubiKey, Touch ID, Windows Hello, Android and iOS
  passkeys. Recommended.
- Authenticator apps (TOTP): any app that scans a QR code, such as the ones from Google, Microsoft or 1Password.
- SMS codes are not supported; see ADR 014 for the reasons.

## Enrol

1. Open Account settings, then Security, then Add a second factor.
2. Choose security key or authenticator app and follow the prompts.
3. Save your ten recovery codes somewhere safe. They are shown only once.

## Lost your second factor?

Sign in with a recovery code, then enrol a new factor. If you have no recovery codes left, a workspace admin
can reset your second factors after verifying your identity; support can do it for single-user workspaces.

## For admins

- Enforce MFA for everyone in the workspace, or only for admins (mandatory for admins from 1 June).
- Allow or disable trusted devices (skip the second factor for 30 days on a device).
- See enrolment status per member and remind those who have not enrolled.
""",
        cl=["mfa-rollout"], refs=["adr-014-webauthn-over-sms"], documents=["services/auth/webauthn.py"],
        reviewed="2026-05",
    ),
    D(
        "acme", "AUTH", "adr-014-webauthn-over-sms", "ADR 014: WebAuthn over SMS codes", "adr", "security",
        """
# ADR 014: WebAuthn over SMS codes

## Status

Accepted (2026-02).

## Context

We need a second factor for all workspaces, mandatory for admins. Customers asked for SMS codes because
they are familiar. SMS codes are phishable, vulnerable to SIM swapping, cost money per message and have poor
delivery in several countries we serve. WebAuthn (security keys and passkeys) is phishing-resistant and
free, and platform authenticators are now on almost every device. TOTP apps are a reasonable fallback.

## Decision

Offer WebAuthn as the primary second factor and TOTP as the alternative. Do not offer SMS. Provide recovery
codes at enrolment, and let admins reset a member's factors.

## Consequences

- Account takeover through phishing becomes much harder for enrolled users.
- Some users without a smartphone or security key need help; support has a process and can send a
  security key to enterprise customers.
- The login handler must support a second-factor step with a short-lived challenge token.
- We will revisit passkeys as a first factor (passwordless) in 2027.
""",
        cl=["mfa-rollout"], refs=["threat-model-account-takeover"], documents=["services/auth/webauthn.py"],
        reviewed="2026-02",
    ),
    D(
        "acme", "AUTH", "threat-model-account-takeover", "Threat model: account takeover", "design", "security",
        """
# Threat model: account takeover

Scope: every way an attacker could act as an acme user without their consent. Restricted to the security
group and the identity leads, because it lists weaknesses that are not fixed yet.

## Assets

Sessions and tokens (access, refresh, API, service account), passwords and second factors, recovery codes,
SSO connections, and the admin privileges of workspace owners.

## Threats and mitigations

### Credential stuffing
Attackers replay leaked password lists. Mitigations: per-IP and per-account rate limits, breached-password
checks, CAPTCHA after repeated failures, MFA. Residual risk: distributed attacks below the per-IP limit.

### Phishing
A fake login page collects password and TOTP code in real time. Mitigation: WebAuthn is bound to the
origin and cannot be relayed. Residual risk: users on TOTP; push them towards security keys.

### Stolen refresh token
Malware or a leaked log line exposes a refresh token. Mitigations: rotation with reuse detection (the
legitimate client's next refresh revokes the family), HttpOnly cookies, redaction in logs. The grace
window introduced after the token refresh outage (10 s, same client id and device binding) slightly widens
the window for an attacker who controls the same device. Accepted by security on 2026-03-20. Open item:
bind refresh tokens to a DPoP key for public clients.

### Session fixation and cookie theft
Mitigations: new session id after login, SameSite=strict, short access token lifetime.

### SSO misconfiguration
A workspace admin configures a malicious IdP or an IdP asserts arbitrary emails. Mitigations: users are
matched by (connection, subject), never by email alone; domain verification before a connection can claim
users of a domain. Open items from the SSO security review are tracked in AUTH-117.

### Support-driven reset
Social engineering of support to reset a second factor. Mitigations: identity verification checklist, a
24-hour delay and email notification before a reset takes effect.

### Trusted device abuse
A stolen laptop with a trusted-device cookie skips the second factor. Mitigations: the cookie only skips
the second factor after a correct password, admins can revoke trusted devices, and the lifetime is 30 days.

## Review cadence

Quarterly, and after every incident involving authentication.
""",
        acl=["group:security", "group:identity-leads"], cl=["mfa-rollout", "auth-hardening"],
        refs=["adr-014-webauthn-over-sms", "token-refresh-design", "security-review-sso"],
        documents=["services/auth/rate_limit.py", "services/auth/login_handler.py"], reviewed="2026-04",
    ),
    D(
        "acme", "AUTH", "security-review-sso", "Security review: SSO token handling", "design", "security",
        """
# Security review: SSO token handling

Review of how the SSO connectors handle tokens from identity providers, done before the SAML to OIDC
migration. Restricted to the security group until the findings are fixed.

## Scope

OIDC connector (authorization code flow with PKCE), the two legacy connections using the hybrid flow, the
storage of IdP refresh tokens used for background user provisioning, and the logs of the connectors.

## Summary of findings

| id | finding | severity | status |
| --- | --- | --- | --- |
| SSO-1 | IdP refresh tokens logged in plain text when a background token refresh fails | high | open |
| SSO-2 | Nonce not verified for the hybrid flow used by two legacy connections | medium | open |
| SSO-3 | IdP refresh tokens encrypted with the same key as acme session secrets | medium | open |
| SSO-4 | ID token audience checked, but azp ignored for multi-audience tokens | low | fixed |
| SSO-5 | Clock leeway of 5 minutes on ID token validation, larger than needed | low | fixed |

## Details

SSO-1: the OIDC client logs the full token response at debug level when the IdP rejects a token refresh.
Debug logging is enabled for single connections during support investigations, so refresh tokens of real
customers reached the log pipeline at least twice. Fix: redact token fields in the client, extend the log
redaction processor with the IdP token field names, purge the affected log indices.

SSO-2: the hybrid flow returns an ID token from the authorization endpoint; without a nonce check, an ID
token can be replayed into another login. Fix: store and verify the nonce; migrate both connections to the
code flow as part of the OIDC migration.

SSO-3: a compromise of one key would expose both. Fix: a dedicated KMS key for IdP tokens.

## Recommendation

Do not move more customers to OIDC until SSO-1 and SSO-2 are fixed. Remediation is tracked in AUTH-117.
""",
        acl=["group:security"], cl=["sso-oidc-migration"], refs=["sso-oidc-migration-plan"],
        documents=["services/auth/oidc_client.py"], reviewed="2026-05",
    ),
    D(
        "acme", "AUTH", "sso-oidc-migration-plan", "SSO migration plan: SAML to OIDC", "design", "identity",
        """
# SSO migration plan: SAML to OIDC

## Why

SAML connections break when identity providers rotate certificates (three enterprise customers were locked
out in April), are hard to debug, and do not give us refresh tokens for background provisioning. Every IdP
our customers use supports OpenID Connect.

## Plan

1. Build the OIDC connector with the authorization code flow and PKCE, and just-in-time provisioning.
2. For each SAML connection, create a shadow OIDC connection with the same domain routing.
3. Switch logins per connection with a flag; sessions do not depend on the protocol, so nobody is logged out.
4. Keep SAML available for 30 days after the switch for rollback, then disable it.
5. Retire the SAML code once all 64 connections have moved (target: end of Q3).

## Order

Okta and Entra ID customers first (no work on the customer side), then Google Workspace, then the few
on-premise ADFS installations, which may need help from their administrators.

## Risks

- Claim mapping differs from attribute mapping; we test each connection with a test user before switching.
- Security review findings must be fixed first (see the SSO token handling review).
- Customers with SCIM provisioning must keep subject identifiers stable.

## Metrics

Logins per protocol, login error rate per connection, support tickets tagged sso.
""",
        cl=["sso-oidc-migration"], refs=["auth-service-architecture", "security-review-sso"],
        documents=["services/auth/oidc_client.py"], reviewed="2026-05",
    ),
    D(
        "acme", "AUTH", "identity-oncall-notes", "Identity on-call handover notes", "runbook", "identity",
        """
# Identity on-call handover notes

Running notes passed from one identity on-call to the next. Restricted because it contains customer
workspace ids and links to the admin console.

## Current state

- Reuse detection enforcement is ON. It was switched to log-only for 40 minutes during the token refresh
  outage and re-enabled after the key was restored. Do not switch it off without telling security.
- Key rotation job: enabled again since 2026-03-28 with the three-phase procedure. Next rotation is
  scheduled automatically; check the key rotation dashboard the morning after.
- Three enterprise workspaces still have SAML metadata imported by hand (no metadata URL). Their IdP
  certificates expire in September; the expiry alert will fire 14 days before.

## Known noisy alerts

- Spike in failed second-factor attempts: usually one enterprise workspace forcing MFA enrolment on Monday
  mornings. Check the workspace breakdown before escalating.
- Token endpoint p99 latency: fires during the nightly load test in staging if the staging alert routing is
  misconfigured again.

## Handy commands

- authctl families revoke --user USER_ID --reason support_request
- authctl keys status
- authctl sso test CONNECTION_ID (dry-run login with the connection's test user)

## Escalation

Security for anything involving token reuse spikes or suspected account takeover; SRE for capacity; the
payments on-call when login problems block checkout.
""",
        acl=["group:identity-oncall", "group:security"], cl=["auth-hardening"],
        refs=["runbook-token-refresh-errors", "runbook-auth-service-key-rotation"], reviewed="2026-06",
    ),
]  # fmt: skip

DOCS += [
    # ---------------------------------------------------------------- acme PAY
    D(
        "acme", "PAY", "payments-retry-idempotency-design", "Payments retry and idempotency design", "design",
        "payments",
        """
# Payments retry and idempotency design

How acme retries payment operations without ever charging a customer twice. Written after the duplicate
card charges incident of 3 March, when retried captures after gateway timeouts charged 412 cards twice.

## Principles

1. A timeout is not a failure. After a request has been sent, the outcome is unknown until proven otherwise.
2. Every money-moving request carries an idempotency key that is stable across retries of the same intent.
3. Retries are bounded: a budget per operation, exponential backoff with full jitter, and a deadline.
4. Reconciliation is the safety net, not the mechanism: it finds what the first three missed.

## Idempotency keys

Key format: sha256 over (merchant_id, order_id, operation, sequence). The operation is capture, refund or
void; the sequence changes only for a deliberate new operation of the same kind, such as the second
partial capture of a split shipment. A retry of the same capture reuses the key.

Keys are stored in payment_idempotency_keys before the gateway call (see ADR 021 for why in Postgres):

| column | meaning |
| --- | --- |
| key, merchant_id | primary key; the unique index is the lock |
| state | pending, succeeded, failed, unknown |
| request_hash | hash of the request body; a different body with the same key is rejected with 422 |
| response | the stored gateway response, returned verbatim for repeated requests |
| expires_at | 24 hours after creation, matching the gateway's own key retention |

## Outcomes

The gateway client returns one of four outcomes:

- succeeded: store the response, mark the key succeeded.
- declined: the issuer said no; not retryable; mark failed.
- failed_before_send: connection refused, DNS failure, pool wait timeout; safe to retry with the same key.
- unknown: read timeout, connection reset after sending, 5xx from the gateway; resolve before retrying.

## Resolving unknown outcomes

Look up the capture by idempotency key (GET /captures?idempotency_key=KEY). Found: treat as succeeded.
Not found after the gateway's processing window (60 seconds): retry with the same key. Lookup failing too:
park the payment in the unresolved state and let the hourly reconciliation decide. Never release the order
to fulfilment while its capture is unresolved, and never capture again with a new key.

## Retry policy

- Capture: up to 3 attempts within 10 minutes, backoff 2 s, 8 s, 30 s with full jitter.
- Refund: up to 5 attempts within 24 hours.
- Webhook delivery to merchants: up to 12 attempts over 3 days.
- The checkout request itself never waits for a retry; retries run in the payments worker.

## Webhooks

Gateway webhooks are delivered at least once. Handlers record the event id in the same transaction as their
side effects and acknowledge duplicates without acting on them.

## Detection and reconciliation

The duplicate capture detector groups captures by (merchant, order, amount) in 30-minute windows and pages
on any group larger than one. The reconciliation job compares the gateway settlement report with the
ledger nightly (hourly during rollouts) and opens a ticket for every mismatch.

## Testing

A chaos test in staging drops 30% of gateway responses after the gateway has processed the request. The
test passes when the number of captures at the gateway equals the number of orders, with zero duplicates,
over 10,000 orders.

## Rollout

Behind payments.capture_idempotency: 5% of merchants, then 50%, then all, each step after 48 hours without a
reconciliation mismatch.
""",
        cl=["duplicate-charges"], refs=["adr-021-idempotency-keys-in-postgres", "gateway-integration-guide",
                                        "reconciliation-runbook"],
        documents=["services/payments/capture.py", "services/payments/idempotency.py",
                   "services/payments/gateway_client.py", "services/payments/webhooks.py"],
        reviewed="2026-04",
    ),
    D(
        "acme", "PAY", "runbook-refunding-duplicate-charges", "Runbook: refunding duplicate charges", "runbook",
        "payments",
        """
# Runbook: refunding duplicate charges

Use when the duplicate capture detector fires, when reconciliation finds an order captured more than once,
or when support escalates a customer charged twice.

## 1. Confirm

Run payctl captures ORDER_ID. A duplicate is two or more successful captures for the same order and
amount. Partial captures of split shipments are not duplicates: check that the capture sequence numbers are
equal, or that the captured total exceeds the order total.

## 2. Stop the cause

If more than a handful of orders are affected, the cause is probably ongoing. Check the gateway timeout
dashboard and the capture retry rate. If retries are the cause and idempotency keys are not enabled for the
merchant, disable capture retries with payctl flags set payments.capture_retries=false.

## 3. Refund

Refund through payctl, never from the gateway dashboard: the dashboard bypasses the ledger and the refund
will show up as a reconciliation mismatch the next night.

    payctl refunds create ORDER_ID --capture CAPTURE_ID --reason duplicate_capture

Keep the first capture, refund the later ones. For many orders, use a CSV and payctl refunds bulk with
--dry-run first, then without. Bulk refunds are rate-limited to 20 per second by the gateway.

## 4. Tell people

- Customers: the duplicate charge apology email template (support sends it; refunds take 5 to 10 business
  days to appear depending on the issuer).
- Merchants: a CSV of affected orders through their account manager.
- Finance: the refund reason tag lets them report the total.

## 5. Verify

The next reconciliation run shows no mismatch for the refunded orders, and the ledger balance for each
order equals one capture.
""",
        cl=["duplicate-charges"], refs=["payments-retry-idempotency-design", "reconciliation-runbook"],
        documents=["services/payments/ledger.py"], reviewed="2026-03",
    ),
    D(
        "acme", "PAY", "postmortem-duplicate-card-charges", "Postmortem: duplicate card charges", "postmortem",
        "payments",
        """
# Postmortem: duplicate card charges (SEV2, 3 March)

Restricted to payments leads: contains merchant names, amounts and gateway contract details.

## Summary

Between 14:02 and 15:20 UTC, card captures that timed out were retried by the payments worker without
idempotency keys. The gateway had processed the original captures, so 412 orders were charged twice and 37
three times, 41,880 EUR in total. All duplicates were refunded by 5 March.

## Timeline (UTC)

- 13:55 The card gateway starts responding slowly (p99 9 s, normally 800 ms) due to an incident on their side.
- 14:02 Gateway client read timeouts (10 s) begin; the worker retries captures up to 3 times.
- 14:05 The gateway client connection pool (20 per process) saturates; queued requests also time out.
- 14:52 The daily duplicate report is not due until 02:00; the first customer complaint reaches support.
- 15:10 Payments on-call paged by support escalation; capture retries disabled with a flag.
- 15:20 Gateway recovers; no more duplicates.
- 3-5 March Reconciliation identifies all affected orders; refunds issued; customers and merchants notified.

## Root cause

The payments client treated a read timeout as a failure and retried the capture without an idempotency key.
The gateway cannot tell a retry from a new capture without a key. The design assumed that a timeout meant
the gateway had not processed the request.

## Contributing factors

- The connection pool was too small for slow gateway responses, turning slowness into more timeouts.
- Duplicate detection ran as a daily report, not an alert.
- The gateway's idempotency key support had been available for two years but was never adopted.

## Action items

- Idempotency keys on every capture (PAY-101), stored with a TTL (PAY-105).
- Timeouts as unknown outcomes (PAY-103).
- Duplicate capture detector as an alert (PAY-106).
- Connection pool sizing and metrics (PAY-114).
- Refund the affected orders (PAY-102) and a support macro (PAY-107).
- Hourly reconciliation during the rollout (PAY-104).
""",
        acl=["group:payments-leads"], cl=["duplicate-charges"],
        refs=["payments-retry-idempotency-design", "runbook-refunding-duplicate-charges"],
        documents=["services/payments/capture.py", "services/payments/gateway_client.py"], reviewed="2026-03",
    ),
    D(
        "acme", "PAY", "adr-021-idempotency-keys-in-postgres", "ADR 021: store idempotency keys in Postgres, not Redis",
        "adr", "payments",
        """
# ADR 021: store idempotency keys in Postgres, not Redis

## Status

Accepted (2026-03).

## Context

Idempotency keys for captures must be recorded before the gateway call and survive until the gateway
forgets them (24 hours). Redis is fast and has native TTLs, but our Redis runs without persistence and
fails over asynchronously: a failover can lose the last writes, which would allow a second capture with a
new key. The payments database is already in every capture transaction.

## Decision

Store keys in payment_idempotency_keys in the payments Postgres cluster, with a unique index on
(merchant_id, key) used as the lock, and delete expired rows with a background job in batches.

## Consequences

- One extra insert and one update per capture, about 2 ms at p99.
- Key writes are part of the same transaction as the payment state, so they cannot diverge.
- The table grows by about 3 million rows per day; the cleanup job keeps it below 4 million.
- If we ever shard payments, keys shard by merchant_id with the payments.
""",
        cl=["duplicate-charges"], refs=["payments-retry-idempotency-design"],
        documents=["services/payments/idempotency.py", "migrations/payments/0042_idempotency_keys.sql"],
        reviewed="2026-03",
    ),
    D(
        "acme", "PAY", "checkout-architecture-overview", "Checkout architecture overview", "design", "payments",
        """
# Checkout architecture overview

## Request flow

A checkout request (POST /checkout) goes through the checkout handler, which calls, in order: the cart
service (lock the cart), pricing (discounts, loyalty, tax, currency conversion), inventory (reserve stock),
fraud scoring, and the payments service (authorise the card). The order is created when authorisation
succeeds; capture happens later, when the order ships.

## Latency budget

The target is p95 below 1 s. Budget per dependency at p95: cart 50 ms, pricing 150 ms, inventory 100 ms,
fraud 200 ms, authorisation 450 ms. Since checkout 2.7 put fraud scoring inline, fraud alone takes 700 ms at
p95, which is the main reason for the latency regression. Currency conversion lookups (120 ms) and queueing
for gateway connections (up to 300 ms) add the rest.

## Pricing

Pricing is a pipeline of rules: catalogue price, merchant promotions, loyalty discounts, tax, conversion.
Rules must be idempotent: pricing may run again on the same cart (for example when the receipt is rendered)
and must produce the same result. The café ½ price bug came from a loyalty rule that was not idempotent.

## Failure handling

Checkout has a total deadline of 3 s that is passed down to dependencies. A dependency failure before
authorisation fails the checkout with a retryable error. After authorisation is sent, the outcome is
resolved by idempotency key and never abandoned.

## Ownership

Checkout handler and pricing: payments team. Fraud scoring: risk team (vendor integration). Inventory:
fulfilment team.
""",
        cl=["checkout-latency"], refs=["fraud-scoring-async-design", "payments-retry-idempotency-design"],
        documents=["services/checkout/handler.py", "services/checkout/pricing.py"], reviewed="2026-05",
    ),
    D(
        "acme", "PAY", "runbook-checkout-latency", "Runbook: checkout latency", "runbook", "sre",
        """
# Runbook: checkout latency

Alert: CheckoutLatencyHigh (checkout p95 above 1.5 s for 10 minutes).

## Find the slow dependency

Open the checkout latency dashboard; each dependency has its own span and panel. Deploy annotations show
recent releases of checkout, pricing, fraud and payments.

- Fraud scoring slow: check the vendor status page. Switch fraud scoring to asynchronous mode with the flag
  checkout.fraud_async=true (orders above the risk threshold are held for review instead).
- Pricing slow: usually the currency conversion cache missing. Check the cache hit rate; restart the
  treasury client if it is stuck refreshing.
- Authorisation slow: check gateway latency and the gateway client pool metrics. If the pool is saturated,
  the gateway is slow; do not raise the pool size above 40 without talking to the payments on-call, as it
  multiplies load on a struggling gateway.

## Roll back

If the regression started with a deploy, roll it back first and investigate afterwards.

## Escalate

Payments on-call for pricing and authorisation; risk team for fraud scoring; SRE for infrastructure.
""",
        cl=["checkout-latency"], refs=["checkout-architecture-overview", "gateway-integration-guide"],
        documents=["services/checkout/handler.py"], reviewed="2026-05",
    ),
    D(
        "acme", "PAY", "gateway-integration-guide", "Card gateway integration guide", "guide", "payments",
        """
# Card gateway integration guide

How acme services talk to the card gateway. Read this before adding a new payment operation.

## Client

Use services/payments/gateway_client.py; never call the gateway's HTTP API directly. The client handles
authentication (mutual TLS plus an API key per merchant account), timeouts, connection pooling, idempotency
headers and the mapping of responses to outcomes.

## Timeouts

Connect timeout 1 s, read timeout 10 s for captures and 5 s for everything else, pool wait timeout 2 s.
A pool wait timeout happens before anything is sent and is safe to retry. A read timeout is an unknown
outcome: see the retry and idempotency design.

## Idempotency

Every POST carries an Idempotency-Key header. Keys are kept by the gateway for 24 hours. Reusing a key with
a different request body returns 409 from the gateway.

## Webhooks

The gateway signs webhooks with HMAC-SHA256; verify the signature before parsing. Events are delivered at
least once and not in order; use the event's created timestamp and the object's version.

## Sandbox

The sandbox accepts test cards; card numbers ending in 0002 decline, 0010 time out after 15 s (useful for
testing unknown outcomes), 3155 require 3-D Secure.

## Limits

100 requests per second per merchant account, 20 per second for refunds. The client backs off on 429.
""",
        cl=["duplicate-charges", "payments-roadmap"], refs=["payments-retry-idempotency-design"],
        documents=["services/payments/gateway_client.py", "services/payments/webhooks.py"], reviewed="2026-04",
    ),
    D(
        "acme", "PAY", "pci-scope-review", "PCI DSS scope review 2026", "design", "security",
        """
# PCI DSS scope review 2026

Annual review of which acme systems are in scope for PCI DSS. Restricted to payments leads and security.

## Result

acme remains SAQ A-EP: card numbers are entered in the gateway's hosted fields and never reach acme
servers. Systems in scope are the checkout pages that embed the hosted fields, the payments service, and
the build pipeline that produces them.

## Changes since last year

- Saved cards store only gateway tokens; no change in scope.
- Apple Pay network tokens are handled like card tokens.
- The 3-D Secure challenge is rendered by the issuer in an iframe; no change in scope.
- Logs: the masking processor in the logging library must be kept through the library upgrade.

## Findings

1. Two engineers outside the payments team had production access to the payments database. Removed.
2. The checkout page's content security policy allowed a wildcard script source for an analytics vendor.
   Tightened to explicit hosts.
3. Quarterly access reviews were done but not recorded. Now recorded in the compliance tracker.

## Next review

March 2027, or earlier if card data handling changes.
""",
        acl=["group:payments-leads", "group:security"], cl=["payments-roadmap"],
        refs=["gateway-integration-guide"], documents=["services/checkout/handler.py"], reviewed="2026-03",
    ),
    D(
        "acme", "PAY", "fraud-scoring-async-design", "Asynchronous fraud scoring", "design", "payments",
        """
# Asynchronous fraud scoring

## Problem

Fraud scoring runs inline in checkout since 2.7 and costs 700 ms at p95 and 1.2 s at p99. Checkout p95
doubled and conversion fell by 1.8%.

## Proposal

Authorise the card during checkout without waiting for the score, and score asynchronously:

1. Checkout authorises and creates the order in state pending_risk.
2. An order.authorised event triggers the scoring worker.
3. Low and medium risk: the order moves to confirmed; capture happens at shipment as today.
4. High risk (about 0.4% of orders): the order is held for manual review; if rejected, the authorisation is
   voided and the customer never pays.

## Why this is safe

Authorisations can be captured up to 7 days later, so holding an order costs nothing. Fulfilment already
waits for confirmed orders. 3-D Secure exemptions need a score before authorisation; for those, checkout
uses the cached score of the customer's last order, or requests the challenge.

## Rollout

checkout.fraud_async per merchant; compare chargeback rates of async and inline merchants for 60 days.
""",
        cl=["checkout-latency"], refs=["checkout-architecture-overview"],
        documents=["services/checkout/fraud_client.py"], reviewed="2026-05",
    ),
    D(
        "acme", "PAY", "reconciliation-runbook", "Runbook: capture reconciliation mismatches", "runbook", "payments",
        """
# Runbook: capture reconciliation mismatches

The reconciliation job compares gateway settlements with ledger captures and files one ticket per mismatch
in the payments-reconciliation queue.

## Mismatch types

- gateway_only: the gateway settled a capture the ledger does not know. Usually an unknown outcome that was
  never resolved. Look up the idempotency key; record the capture in the ledger with payctl ledger
  record-capture, or refund it if the order was cancelled.
- ledger_only: the ledger has a capture the gateway never settled. Check whether the capture was declined
  late; reverse the ledger entry.
- duplicate: two captures for one order. Follow the duplicate charges refund runbook.
- amount: amounts differ. Usually currency rounding; escalate to finance if above 1 EUR.

## When many mismatches appear at once

Check whether the settlement file arrived complete (row count in the trailer). A truncated file produces
hundreds of ledger_only mismatches; re-run the job after the gateway re-sends the file.
""",
        cl=["duplicate-charges"], refs=["runbook-refunding-duplicate-charges"],
        documents=["jobs/reconcile_captures.py", "services/payments/ledger.py"], reviewed="2026-04",
    ),
    D(
        "acme", "PAY", "eu-vat-guide", "EU VAT handling in checkout", "guide", "payments",
        """
# EU VAT handling in checkout

## Rules we implement

- B2C sales to EU buyers: VAT of the buyer's country (One Stop Shop), from the effective-dated rate table.
- B2B sales with a validated VAT id in another member state: reverse charge, 0% with the legal mention on
  the receipt.
- Reduced rates by product tax category (food, books, children's clothing) per country.

## Where it happens

The tax rule in the pricing pipeline, after discounts and before currency conversion. The applied rate and
rule id are stored on each order line so refunds and receipts use the same numbers.

## Rounding

Per line, half-even, in minor units of the order currency. Totals are sums of rounded lines.

## Changing a rate

Add a row with the new effective date to the rate table; never edit an existing row. Orders keep the rate
they were priced with.
""",
        cl=["payments-roadmap"], refs=["checkout-architecture-overview"],
        documents=["services/checkout/pricing.py"], reviewed="2026-02",
    ),
]  # fmt: skip

DOCS += [
    # ---------------------------------------------------------------- acme SEARCH
    D(
        "acme", "SEARCH", "search-ranking-design", "Search ranking design", "design", "search",
        """
# Search ranking design

How product search turns a query into a ranked list.

## Pipeline

1. Analysis: tokenise, lowercase, fold accents (keeping the original token), stem per locale.
2. Query understanding: detect sizes, colours and materials and turn them into filters.
3. Expansion: add synonyms from the curated dictionary with a boost of 0.6.
4. Retrieval: BM25 over title, brand, category and description with field boosts (title 3, brand 2,
   category 1.5, description 1), plus typo tolerance for terms of five characters or more.
5. First-stage ranking: BM25 score times business factors (in-stock 1.0, low stock 0.8, out of stock 0.5).
6. Re-ranking: the learning-to-rank model re-orders the top 200 results.

## Learning to rank

A gradient-boosted model trained weekly on click and add-to-cart feedback, corrected for position bias.
Features are computed at query time from the index and from the feature store. The model is shipped as a
versioned artefact and can be rolled back by changing the model id in the ranking config.

## Evaluation

Every change is evaluated offline on the judged query set (NDCG@10, recall@100, zero-result rate) before an
A/B test. A change that lowers NDCG@10 by more than 0.5 points on any frequency band is not shipped.

## Freshness

Prices and availability in the index must be fresh within minutes for the in-stock factor to make sense.
The index lag incident showed that this is not guaranteed during bulk imports; live updates now have a
priority lane.

## Non-goals

Semantic (vector) retrieval is out of scope for 2026; we will revisit once the evaluation set covers long,
descriptive queries.
""",
        cl=["relevance-tuning"], refs=["relevance-evaluation-guide", "adr-007-gradient-boosted-ltr"],
        documents=["services/search/ranking.py", "services/search/synonyms.py", "services/search/analyzer.py"],
        reviewed="2026-04",
    ),
    D(
        "acme", "SEARCH", "relevance-evaluation-guide", "Relevance evaluation guide", "guide", "search",
        """
# Relevance evaluation guide

How to measure whether a ranking change makes search better.

## The judged set

1,200 queries sampled from search logs by frequency band: 300 head, 500 torso, 400 tail. Each query has
graded labels (0 irrelevant, 1 partially relevant, 2 relevant, 3 exact) for the top 20 results of the
baseline and of every evaluated variant. New results are sent for labelling before the numbers count.

## Running an evaluation

    searchctl eval --config ranking.yaml --baseline production

The report shows NDCG@10 per band, recall@100, zero-result rate, and the ten queries that changed most.
Always read those ten queries: a metric gain that comes from one broken query is not a gain.

## A/B tests

After an offline win, run an A/B test on 10% of traffic for at least 14 days. Primary metric: add-to-cart
rate per search; guardrails: zero-result rate, search latency p95, revenue per visitor.

## Pitfalls

- Position bias: clicks favour the top results; use the propensity-corrected labels.
- Seasonality: compare periods of the same length that include the same weekdays.
- Judged set drift: the set is frozen per quarter; do not compare numbers across quarters.
""",
        cl=["relevance-tuning"], refs=["search-ranking-design"], documents=["services/search/ltr_features.py"],
        reviewed="2026-03",
    ),
    D(
        "acme", "SEARCH", "adr-007-gradient-boosted-ltr", "ADR 007: gradient-boosted learning to rank", "adr",
        "search",
        """
# ADR 007: gradient-boosted learning to rank

## Status

Accepted (2026-01).

## Context

Hand-tuned field boosts reached their limit: every improvement for one category hurt another. We have
enough click feedback (about 4 million search sessions per week) to learn a ranking function.

## Options considered

- Hand-tuned boosts per category: cheap, but does not scale to 900 categories.
- Neural re-ranker on text: best quality in the literature, but adds 40-80 ms and needs GPUs.
- Gradient-boosted trees (LambdaMART) on engineered features: 3 ms for 200 results on CPU, interpretable
  feature importances, and proven in similar catalogues.

## Decision

Use LambdaMART over engineered features to re-rank the top 200 results, retrained weekly.

## Consequences

- A feature store for product features (click-through rate, price percentile) is needed.
- Model versions are artefacts with an evaluation report attached; rollback is a config change.
- A neural re-ranker can be added later as a feature, not as a replacement.
""",
        cl=["relevance-tuning"], refs=["search-ranking-design", "relevance-evaluation-guide"],
        documents=["services/search/ltr_features.py"], reviewed="2026-01",
    ),
    D(
        "acme", "SEARCH", "postmortem-search-index-lag", "Postmortem: search index lag after bulk import",
        "postmortem", "search",
        """
# Postmortem: search index lag after bulk import (SEV3, 22 April)

## Summary

A catalogue bulk import of 2.3 million products published 19 million change events in 40 minutes. The
indexing consumer, which processes about 900 events per second, fell six hours behind. During that time
search showed stale prices and availability, and checkout rejected 3,400 carts whose prices had changed.

## Timeline (UTC)

- 09:10 Bulk import starts (a merchant migrating from another platform).
- 09:50 Import finished publishing; consumer lag 2 hours and growing.
- 10:40 First support tickets about prices in search differing from checkout.
- 11:05 Search on-call paged by the generic error budget alert; no lag alert existed.
- 11:30 Import paused (already finished publishing, so no effect); workers scaled from 4 to 12, but the
  topic has 8 partitions, so only 8 workers consume.
- 15:10 Lag back under 5 minutes.

## Root cause

Bulk imports and live updates share one topic and one consumer. There is no back-pressure from the consumer
to the importer, and no coalescing of multiple events for the same product.

## Action items

- Separate priority lanes for live updates and bulk imports; coalesce events per product (SEARCH-111).
- Alert on consumer time lag (SEARCH-112).
- Large imports go to a freshly built index, swapped in with an alias (SEARCH-110).
- Show live prices from the pricing service on the first results page (SEARCH-113).
""",
        cl=["index-lag"], refs=["runbook-zero-downtime-reindex", "search-ranking-design"],
        documents=["services/search/indexer.py"], reviewed="2026-04",
    ),
    D(
        "acme", "SEARCH", "runbook-zero-downtime-reindex", "Runbook: zero-downtime reindex", "runbook", "search",
        """
# Runbook: zero-downtime reindex

Use for analyzer or mapping changes (for example accent folding), for large catalogue imports, and to
recover from a corrupted index.

## Steps

1. searchctl index create --version N --mapping mappings/products.json
2. searchctl index load --version N --snapshot latest (records the Kafka offset of the snapshot)
3. searchctl index replay --version N --from-snapshot-offset (catches up with live updates)
4. searchctl index compare --a products --b products_vN (document count within 0.1%, 500 sampled
   documents identical apart from the changed fields, 200 judged queries with NDCG within 0.5 points)
5. searchctl alias swap products products_vN
6. Keep the old index for 24 hours; searchctl alias swap back to roll back.

## Watch

Indexing consumer lag during replay, cluster heap usage (two full indices need twice the disk), and search
latency after the swap (cold caches for about 10 minutes).

## Do not

Reindex during a sale or a catalogue bulk import. Check the merchandising calendar first.
""",
        cl=["index-lag", "relevance-tuning"], refs=["postmortem-search-index-lag"],
        documents=["services/search/reindex.py", "services/search/indexer.py"], reviewed="2026-05",
    ),
    D("acme", "SEARCH", "untitled-draft", None, "design", "search", "", reviewed=""),
    # ---------------------------------------------------------------- shared id, both tenants
    D(
        "acme", "AUTH", "onboarding", "Engineering onboarding at Acme", "guide", "platform",
        """
# Engineering onboarding at Acme

Welcome! This page gets you from a new laptop to your first deploy in your first week.

## Day 1

- Collect your laptop and security key at the IT desk. Enrol the key as your second factor right away; SSO
  to every internal tool requires it.
- Install the developer tools with the bootstrap script from the platform repository.
- Join your team's channel, #eng-announcements and #incidents.

## Week 1

- Read the architecture overviews of your area: the auth service architecture (identity), the checkout
  architecture overview (payments), the search ranking design (search).
- Shadow an on-call shift. Read the token refresh errors runbook and the duplicate charges refund runbook,
  even if you are not on those teams; they are the best examples of how we write runbooks.
- Ship a small change through the normal review and canary process.

## Access

Request access in the access portal. Production access needs your manager's approval and expires after 90
days. Dashboards (including token refresh, checkout latency and indexing lag) are open to every engineer.

## Ask

Nobody expects you to know anything yet. Ask in your team channel first, then in #eng-help.
""",
        refs=["auth-service-architecture", "runbook-token-refresh-errors"], node_id="shared:doc:onboarding",
        reviewed="2026-01",
    ),
]  # fmt: skip

DOCS += [
    # ---------------------------------------------------------------- globex CORE
    D(
        "globex", "CORE", "session-token-lifecycle", "Session and token lifecycle", "design", "core",
        """
# Session and token lifecycle

How Globex authenticates users of the web app, the mobile app and the public API, and how session tokens
are issued, validated, refreshed and revoked.

## Tokens

- Session token: a JWT (HS256 today, moving to EdDSA with the auth service extraction), valid for 1 hour,
  sent as a bearer token. Claims: sub, tenant, roles, iat, nbf, exp, sid.
- Refresh token (mobile only, since June): opaque, 30 days, rotated on every use, bound to the device id.
- API keys for the public API: long-lived, scoped, revocable; not covered here.

## Validation

Every API node validates session tokens locally: signature, exp and nbf with a leeway of 60 seconds (it
was zero before the session token expiry bug), tenant claim against the request's tenant. Nodes must keep
their clocks within one second of the reference; nodes drifting more than ten seconds fail their health
check and leave the load balancer.

## Token refresh

The web app refreshes its session by re-authenticating silently with the session cookie. The mobile app
uses the token refresh endpoint (POST /v2/session/refresh) with its refresh token. Refresh tokens are
rotated; presenting an old one revokes the family, except within a 10-second grace period for the same
device id (lost responses on mobile networks are common). Concurrent refreshes from the app are
serialised in the app's API client.

## Revocation

Logging out revokes the session id (sid) in a Redis set checked by the gateway for 1 hour, and revokes the
refresh token family. Password changes revoke every session of the user.

## Migration to the auth service

Issuing moves out of the monolith into the auth service. The auth service signs with asymmetric keys and
publishes a JWKS; API nodes only verify, so they no longer need the signing secret. Rotation follows the
publish, sign, retire pattern with overlap.
""",
        cl=["session-token-expiry"], refs=["adr-003-jwt-session-tokens", "runbook-clock-drift"],
        documents=["core/auth/session_tokens.go", "core/auth/refresh.go", "core/auth/clock.go"],
        reviewed="2026-06",
    ),
    D(
        "globex", "CORE", "incident-review-early-session-expiry", "Incident review: early session expiry",
        "postmortem", "sre",
        """
# Incident review: early session expiry (SEV2, 2 June)

Restricted to Globex SRE: contains node names, internal addresses and customer impact per tenant.

## Summary

From 29 May to 2 June, mobile users were logged out roughly every hour, and some web requests failed with
401 right after login. api-7's clock was 94 seconds fast because chrony had lost its upstream servers after
a network change. Tokens issued by other nodes looked expired on api-7 early, and tokens issued by api-7
were "not yet valid" on other nodes for the first 94 seconds. The mobile app had no token refresh, so any
session token failure sent the user back to the login screen.

## Impact

- About 22% of mobile sessions ended with a forced login at least once per day.
- App store rating dropped from 4.6 to 4.2 during the week; 380 reviews mention being logged out.
- No security impact.

## Detection

Nobody monitored clock drift. Support noticed the pattern in app reviews four days after the drift began.

## Root cause

Token validation had zero clock leeway, clocks were not monitored, and the network change removed the NTP
servers from api-7's allowed egress list.

## Action items

- 60-second leeway on token validation (CORE-101).
- Token refresh endpoint for the mobile app (CORE-102) with rotation (CORE-105).
- Clock drift monitoring and health checks (CORE-103).
- Move token issuing to the auth service (CORE-104).
""",
        acl=["group:globex-sre"], cl=["session-token-expiry"],
        refs=["session-token-lifecycle", "runbook-clock-drift"], documents=["core/auth/session_tokens.go"],
        reviewed="2026-06",
    ),
    D(
        "globex", "CORE", "runbook-clock-drift", "Runbook: clock drift on API nodes", "runbook", "sre",
        """
# Runbook: clock drift on API nodes

Alert: ClockDriftHigh (absolute NTP offset above 1 s on any API node for 5 minutes).

## Why it matters

Session tokens are validated with a 60-second leeway. Drift above that makes valid tokens look expired (the
node runs fast) or not yet valid (the node runs slow); users get logged out.

## Check

    chronyc tracking
    chronyc sources -v

Look at "System time" (the offset) and whether any source is marked as selected (*). No selected source
means chrony has no upstream: check the egress rules for UDP 123 to the NTP pool servers.

## Fix

- No upstream: restore the egress rule, then chronyc makestep to correct immediately.
- Upstream fine but large offset: chronyc makestep; if it drifts again within an hour, replace the node.
- Above 10 s the node fails its health check and is drained automatically; it returns when the offset is
  back under 1 s.

## After

Look for 401 spikes on the node during the drift window and tell support if mobile users were affected.
""",
        cl=["session-token-expiry"], refs=["session-token-lifecycle"], documents=["core/auth/clock.go"],
        reviewed="2026-06",
    ),
    D(
        "globex", "CORE", "api-gateway-rate-limits", "API gateway rate limits", "design", "core",
        """
# API gateway rate limits

## Goals

Keep the gateway healthy under bursts, retries and abusive clients, and turn overload into explicit 429
responses with Retry-After instead of 503s and timeouts.

## Limits

- Per tenant and route class (read, write, bulk): token buckets sized by plan.
- Per internal client: quotas for each internal service, so one misbehaving service cannot starve others.
- Global concurrency limit per gateway pod with load shedding of the lowest priority traffic first.

## Retries

Clients of the internal SDK retry only idempotent requests, at most with a retry budget of 10% of their
successful requests over a sliding window, with exponential backoff and full jitter, and always respect
Retry-After. Without budgets, a restart of the gateway turned into a retry storm on 9 July.

## Implementation

Buckets live in gateway memory and are synchronised approximately through Redis every second. The error of
this approximation is bounded by the number of pods times one second of traffic, which is acceptable.
If Redis is down, pods fall back to local limits divided by the pod count.

## Observability

Rejections per tenant, route class and client; retry budget exhaustion per client; load shedding events.
""",
        cl=["retry-storm"], refs=["core-service-standards"],
        documents=["core/gateway/ratelimit.go", "core/gateway/retry_budget.go"], reviewed="2026-07",
    ),
    D(
        "globex", "CORE", "postmortem-retry-storm", "Postmortem: internal retry storm", "postmortem", "sre",
        """
# Postmortem: internal retry storm (SEV1, 9 July)

Restricted to Globex SRE: contains per-customer traffic figures.

## Summary

A gateway configuration push restarted every gateway pod within 90 seconds. The gateway returned 503 for
about 40 seconds. Internal clients retried each failed request five times with a fixed 100 ms delay and no
budget, so when the gateway came back it received eight times its normal traffic and fell over again. The
API was unavailable or degraded for 55 minutes.

## Impact

- Public API error rate above 50% for 55 minutes; all tenants affected.
- Billing retries and usage syncs failed and queued; the invoice retry backlog started here.

## Timeline (UTC)

- 14:00 Config push; all gateway pods restart at once.
- 14:01 503s; internal clients retry; traffic x8.
- 14:05 Autoscaler adds pods; new pods fail health checks under load and are replaced.
- 14:30 Internal traffic blocked at the load balancer.
- 14:42 Gateway healthy; internal clients re-enabled one by one.
- 14:55 Traffic normal.

## Root cause

Unbounded retries without jitter in the shared SDK client, combined with a non-rolling restart.

## Action items

Retry budgets (CORE-108), rate limits (CORE-109), circuit breaker in billing (CORE-110), graceful shutdown
and rolling config pushes (CORE-111).
""",
        acl=["group:globex-sre", "user:ivan"], cl=["retry-storm"], refs=["api-gateway-rate-limits"],
        documents=["core/gateway/retry_budget.go"], reviewed="2026-07",
    ),
    D(
        "globex", "CORE", "adr-003-jwt-session-tokens", "ADR 003: JWT session tokens with short expiry", "adr",
        "core",
        """
# ADR 003: JWT session tokens with short expiry

## Status

Accepted (2025-09), amended (2026-06) to add token refresh for mobile.

## Context

Session lookups in the monolith's database were 30% of database load. Stateless tokens remove the lookup
but cannot be revoked individually.

## Decision

Self-contained JWT session tokens valid for one hour, validated locally by every API node, with a small
revocation list for logouts. Amendment: the mobile app gets rotating refresh tokens, because one-hour
sessions without refresh logged mobile users out constantly.

## Consequences

- Clocks matter: validation depends on every node agreeing on the time (see the session token expiry
  incident); we validate with a 60-second leeway and monitor drift.
- The signing secret is shared by all nodes until issuing moves to the auth service.
""",
        cl=["session-token-expiry"], refs=["session-token-lifecycle"], documents=["core/auth/session_tokens.go"],
        reviewed="2026-06",
    ),
    D(
        "globex", "CORE", "core-service-standards", "CORE service standards", "guide", "core",
        """
# CORE service standards

Every Globex service owned by CORE, and every service that wants platform support, follows these standards.

## Runtime

- Go, the current toolchain (1.26), built with the shared build image.
- Graceful shutdown: fail readiness on SIGTERM, wait 5 s, drain for up to 25 s.
- Health checks: liveness (process up) and readiness (dependencies reachable, clock offset below 10 s).

## Calls between services

- Use the internal SDK client: deadlines propagated, retries only for idempotent requests, retry budget,
  exponential backoff with full jitter, circuit breaker for each dependency.
- Never retry on 429 before Retry-After.

## Data

- Postgres through the shared pool package: at most 20 connections per instance, 2 s acquire timeout.
- Migrations are backwards compatible for one release.

## Observability

Structured logs (log/slog) with tenant and request ids, RED metrics per endpoint, traces through the
gateway. Secrets and tokens are redacted by the logging handler.

## Configuration

Feature flags from the flags service; secrets from the secrets manager, rotated automatically.
""",
        cl=["core-platform"], refs=["api-gateway-rate-limits"],
        documents=["core/platform/shutdown.go", "core/platform/flags.go", "core/db/pool.go"], reviewed="2026-07",
    ),
    D(
        "globex", "CORE", "onboarding", "Engineering onboarding at Globex", "guide", "platform",
        """
# Engineering onboarding at Globex

Hello and welcome to Globex engineering. This page covers your first two weeks.

## First day

- Get your accounts: SSO, the code host, the issue tracker and the on-call tool. Your manager has already
  requested them.
- Run the setup script from the core repository; it installs Go, the build image and the local stack.
- Say hello in #engineering.

## First week

- Read the CORE service standards and the session and token lifecycle document; almost every service you
  touch validates session tokens.
- Billing engineers: read the billing retries and dunning design and the stuck invoice retries runbook.
- Pair with a teammate on a small ticket and deploy it through the canary.

## Access

Production access is granted per team after two weeks and reviewed monthly. The token refresh, gateway and
billing retry dashboards are visible to everyone.

## Getting help

Your onboarding buddy first, then your team channel. There are no silly questions in your first months.
""",
        refs=["core-service-standards", "session-token-lifecycle"], node_id="shared:doc:onboarding",
        reviewed="2026-02",
    ),
    # ---------------------------------------------------------------- globex BILLING
    D(
        "globex", "BILLING", "billing-retries-and-dunning", "Billing retries and dunning", "design", "billing",
        """
# Billing retries and dunning

How Globex collects a failed subscription payment: retries, dunning emails, suspension, and the rules that
keep a retry from ever charging an invoice twice.

## Overview

When a renewal charge fails, the invoice enters the retry schedule. Each retry is a job on the invoice
retry queue. In parallel, the dunning sequence emails the customer. If all retries fail, the account is
suspended at the end of the dunning sequence; paying the invoice from the billing portal reactivates it.

## Classifying failures

| decline class | examples | retry? |
| --- | --- | --- |
| soft | insufficient funds, issuer unavailable, do not honour | yes, on the schedule |
| hard | stolen card, closed account, invalid card number | no; ask for a new payment method |
| technical | provider timeout, 5xx, rate limited | yes, quickly, with the same idempotency key |
| token | token_expired, token_not_found | re-tokenise, then retry |

## Retry schedule (payday-aware, since July)

Instead of fixed days 1, 3, 5 and 7, retries are planned around the customer's usual payment day of the
month (learned from their last successful payments), skipping weekends and bank holidays in the customer's
country. At most four attempts in 21 days. ADR 009 has the data behind this.

## Idempotency

Every charge attempt has the identity (invoice_id, attempt_number).

1. Before calling the provider, the worker inserts a row into charge_attempts; the unique constraint on
   (invoice_id, attempt_number) guarantees one owner per attempt.
2. The provider call carries the idempotency key invoice_id:attempt_number, so even a repeated call
   returns the first result.
3. The double charge guard refuses a charge when the invoice has a successful charge in the last 24 hours,
   and pages the billing on-call when it fires.

In July the queue's visibility timeout (5 minutes) was shorter than slow charge calls, the same job ran
twice, and 214 invoices were charged twice; layers 1 and 2 did not exist yet.

## Dunning

Emails on day 0, 7 and 14 after the first failure, each step recorded in dunning_events with a unique
(invoice_id, step) so that re-queued retries never send the same email twice. Emails link to the billing
portal with a signed, single-use token.

## Suspension and recovery

On day 21 the account is suspended (read-only access). Paying restores access immediately. After 60 days the
account is closed and its data scheduled for deletion according to the contract.

## Observability

Queue depth and age of the oldest job, charge outcomes by decline class and provider, double charge guard
activations, dunning emails sent per step, recovery rate per retry attempt.

## Open questions

- Should we retry hard declines once after a card updater refresh?
- Per-country retry limits (some regulators limit the number of attempts).
""",
        cl=["invoice-retries"], refs=["adr-009-payday-aware-retries", "runbook-stuck-invoice-retries"],
        documents=["billing/retry_scheduler.py", "billing/charge.py", "billing/dunning.py"], reviewed="2026-07",
    ),
    D(
        "globex", "BILLING", "runbook-stuck-invoice-retries", "Runbook: stuck invoice retries", "runbook",
        "billing",
        """
# Runbook: stuck invoice retries

Alert: InvoiceRetryBacklog (more than 10,000 jobs or oldest job older than 2 hours).

## Check

- Provider health: latency and error rate per payment provider on the billing dashboard.
- Worker health: are workers busy (slow provider) or idle (stuck consumer)?
- Double charge guard activations: any activation during a backlog means jobs are running twice.

## Mitigate

1. Slow provider: lower per-provider concurrency with billingctl providers set-concurrency, so workers do
   not all block on it; other providers keep flowing.
2. Stuck consumer: restart workers one at a time; never purge the queue.
3. Pause new retries (billingctl retries pause) if the provider is down; the schedule resumes from where it
   paused and no attempt is skipped.

## Drain

Resume in batches of 1,000 with billingctl retries resume --batch 1000, and watch the guard activations.

## After

Check for invoices charged twice (billingctl invoices duplicates --since START). Refund with credit notes;
tell customer success. Check that dunning emails were not sent twice.
""",
        cl=["invoice-retries"], refs=["billing-retries-and-dunning", "billing-oncall-handbook"],
        documents=["billing/retry_scheduler.py", "billing/charge.py"], reviewed="2026-07",
    ),
    D(
        "globex", "BILLING", "adr-009-payday-aware-retries", "ADR 009: payday-aware retry schedule", "adr", "billing",
        """
# ADR 009: payday-aware retry schedule

## Status

Accepted (2026-06).

## Context

Fixed retry schedules (days 1, 3, 5, 7) recover 38% of soft-declined renewals. Most soft declines are
insufficient funds, and customers are paid on predictable days.

## Decision

Plan retries relative to the customer's usual payment day: one attempt the day after it, one two days
after, then the fixed fallbacks. Skip weekends and bank holidays in the customer's country. Keep at most
four attempts in 21 days.

## Evidence

On 180,000 historical failures, the payday-aware schedule would have recovered 51% (+13 points), with no
increase in attempts per invoice.

## Consequences

- The scheduler needs the customer's payment history and a holiday calendar per country.
- Retries are spread over the month, which smooths provider load (a side benefit after the July backlog).
""",
        cl=["invoice-retries"], refs=["billing-retries-and-dunning"], documents=["billing/retry_scheduler.py"],
        reviewed="2026-06",
    ),
    D(
        "globex", "BILLING", "vat-rules-switzerland", "VAT rules for Swiss customers", "guide", "billing",
        """
# VAT rules for Swiss customers

## Rates

Standard rate 8.1% since 1 January 2024 (7.7% before), reduced rate 2.6%, accommodation 3.8%. Rates are
effective-dated rows in the tax table; an invoice stores the rate it used.

## Registration

Globex is registered for Swiss VAT (MWST/TVA/IVA) because its Swiss turnover exceeds CHF 100,000. Invoices to
Swiss customers show our UID with the MWST suffix and the customer's UID for businesses.

## Currency

Swiss invoices are issued in CHF. If an invoice is in another currency, the VAT amount must also be shown
in CHF at the rate of the invoice date.

## Corrections

Wrong rates are corrected with a correction invoice for the difference, never by silently re-issuing the
original. The January to July 2026 invoices for customers in Zürich, Genève and Basel with the outdated
7.7% rate are being corrected this way.
""",
        cl=["tax-invoicing"], documents=["billing/tax/vat.py"], reviewed="2026-07",
    ),
    D(
        "globex", "BILLING", "billing-security-review", "Security review: payment provider tokens", "design",
        "security",
        """
# Security review: payment provider tokens

Restricted to the Globex security group.

## Scope

How billing stores and uses payment method tokens from the payment provider, the token refresh
(re-tokenisation) after the provider migration, and refresh token handling of the mobile app where it
touches billing (in-app purchases of plan upgrades).

## Findings

1. Payment method tokens from the old integration are stored unencrypted in the customers table. They are
   not card numbers, but they can be charged with our provider credentials. Encrypt at rest with a
   dedicated key. (high)
2. The re-tokenisation job logs provider responses including new tokens at info level. Redact. (high)
3. Mobile refresh tokens are accepted by the billing portal's session endpoint without the device binding
   check the API enforces. Align with the API. (medium)
4. The double charge guard can be bypassed by an admin endpoint used for manual charges. Route manual
   charges through the same guard. (medium)

## Positive observations

Idempotency keys on every charge call; charge attempts recorded before provider calls; no card numbers in
Globex systems.
""",
        acl=["group:security"], cl=["invoice-retries"], refs=["billing-retries-and-dunning"],
        documents=["billing/charge.py"], reviewed="2026-07",
    ),
    D(
        "globex", "BILLING", "proration-design", "Proration design", "design", "billing",
        """
# Proration design

## Rules

- Upgrade mid-period: charge (new price - old price) x remaining seconds / period seconds, immediately.
- Downgrade mid-period: credit the same formula on the next invoice; no refunds to the card.
- Quantity changes (seats): prorated the same way, aggregated per day to avoid tiny charges.
- Usage-based items are not prorated; they are billed on actual usage.

## Charging

Immediate proration charges go through the same charge path as renewals and retries, with idempotency key
invoice_id:attempt_number, so a double click on "upgrade" cannot charge twice.

## Rounding

Compute in minor units with integer arithmetic; round half-even once per line.

## Edge cases

Plan changes in the last hour of a period are applied at renewal instead. Trials are not prorated. Annual
plans prorate by second like monthly ones.
""",
        cl=["tax-invoicing", "billing-upkeep"], refs=["billing-retries-and-dunning"],
        documents=["billing/proration.py"], reviewed="2026-05",
    ),
    D(
        "globex", "BILLING", "invoice-rendering-guide", "Invoice rendering guide", "guide", "billing",
        """
# Invoice rendering guide

Invoices are rendered from an HTML template to PDF by billing/invoices/render.py.

## Content

Seller and buyer details with tax ids, invoice number (per-country sequence), dates, lines with quantity,
unit price, tax rate and amount, totals per tax rate, total in invoice currency and, when required, tax in
local currency (CHF for Switzerland).

## Performance

Large usage invoices (thousands of lines) are rendered asynchronously; the portal shows a download link
when ready. Totals are computed once before rendering, not in the template. Fonts are subset.

## Localisation

Labels come from the translation platform; numbers and dates use CLDR formats for the customer's locale
(1’234.50 in de-CH, 1 234,50 in fr-CH).

## Credit notes

Credit notes use the same template with a negative total and a reference to the original invoice.
""",
        cl=["tax-invoicing", "billing-upkeep"], refs=["vat-rules-switzerland"],
        documents=["billing/invoices/render.py"], reviewed="2026-04",
    ),
    D(
        "globex", "BILLING", "billing-oncall-handbook", "Billing on-call handbook", "runbook", "billing",
        """
# Billing on-call handbook

## What you own

The invoice retry queue and workers, the charge path to payment providers, dunning emails, invoice rendering
and the billing portal.

## Alerts

- InvoiceRetryBacklog: see the stuck invoice retries runbook.
- DoubleChargeGuardFired: an invoice was about to be charged twice. Find out why before doing anything else;
  it usually means jobs are running twice.
- DeclineCodeSpike: one decline code above five times its usual rate; token_expired means stored payment
  tokens need re-tokenising.
- InvoiceRenderSlow: p95 above 10 s; usually one huge usage invoice.

## Before you hand over

Write down open incidents, paused retries and anything you changed with billingctl.

## Escalation

CORE on-call for gateway and database problems; the payment provider's support line for provider
incidents (number in the vendor sheet); customer success for customer communication.
""",
        cl=["billing-upkeep", "invoice-retries"], refs=["runbook-stuck-invoice-retries"],
        documents=["billing/charge.py"], reviewed="2026-07",
    ),
]  # fmt: skip


def C(  # noqa: N802 (a short constructor for the tables below)
    tenant: str,
    project: str,
    path: str,
    repo: str,
    summary: str,
    body: str,
    *,
    cl: tuple[str, ...] | list[str] = (),
    dep: tuple[str, ...] | list[str] = (),
    sig: tuple[str, ...] | list[str] = (),
) -> dict[str, Any]:
    """One code file: path, repository, summary, an excerpt of its source; dep names code paths."""
    language = {"py": "python", "go": "go", "kt": "kotlin", "ts": "typescript", "sql": "sql"}[path.rsplit(".", 1)[1]]
    return {
        "tenant": tenant, "project": project, "path": path, "repo": repo, "language": language,
        "summary": summary, "body": body.strip("\n"), "clusters": list(cl), "depends": list(dep),
        "signals": list(sig),
    }  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Code files: excerpts of the real thing (20-60 lines), not whole files.
# ----------------------------------------------------------------------------------------------
CODE: list[dict[str, Any]] = [
    # ---------------------------------------------------------------- acme AUTH
    C(
        "acme", "AUTH", "services/auth/token_refresh.py", "acme/platform",
        "OAuth refresh_token grant: atomically redeems a refresh token, replays the result to concurrent "
        "refreshes within the grace window, and issues a new access and refresh token pair.",
        r'''
"""The refresh_token grant of POST /oauth/token."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from services.auth import keys, metrics
from services.auth.refresh_store import RefreshStore, Redemption

log = logging.getLogger(__name__)
GRACE_WINDOW_S = 10
ACCESS_TOKEN_TTL_S = 15 * 60


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    expires_in: int


def refresh(store: RefreshStore, client_id: str, presented: str, device_binding: str) -> TokenPair:
    """Exchange a refresh token for a new pair; safe under concurrent calls for one session."""
    redemption = store.redeem(presented, client_id=client_id)  # one atomic UPDATE ... WHERE consumed_at IS NULL
    if redemption is Redemption.REDEEMED:
        pair = _issue(store, redemption.family_id, client_id)
        store.remember_result(presented, pair, ttl_s=GRACE_WINDOW_S)
        metrics.refresh_total.labels(result="ok").inc()
        return pair
    if redemption is Redemption.ALREADY_CONSUMED:
        replay = store.recent_result(presented, client_id=client_id, device_binding=device_binding)
        if replay is not None:  # the loser of a race, or a retry whose response was lost
            log.info("refresh replayed", extra={"reason": "concurrent_refresh", "family": redemption.family_id})
            metrics.refresh_total.labels(result="concurrent_refresh").inc()
            return replay
        store.revoke_family(redemption.family_id, reason="reuse_detected")
        metrics.refresh_total.labels(result="reused").inc()
        raise InvalidGrant("refresh token reuse detected")
    metrics.refresh_total.labels(result=redemption.name.lower()).inc()
    raise InvalidGrant(f"refresh token {redemption.name.lower()}")


def _issue(store: RefreshStore, family_id: str, client_id: str) -> TokenPair:
    claims = store.claims_for_family(family_id)
    access = keys.sign({**claims, "client_id": client_id}, ttl_s=ACCESS_TOKEN_TTL_S)
    return TokenPair(access, store.new_refresh_token(family_id), ACCESS_TOKEN_TTL_S)


class InvalidGrant(Exception):
    """Maps to HTTP 400 {"error": "invalid_grant"}."""
''',
        cl=["token-refresh-outage"], dep=["services/auth/refresh_store.py", "services/auth/keys.py"],
        sig=["token-refresh-outage-1"],
    ),
    C(
        "acme", "AUTH", "services/auth/refresh_store.py", "acme/platform",
        "Postgres storage of refresh tokens and token families: atomic redemption, short-lived replay of "
        "results for concurrent refreshes, and family revocation.",
        r'''
"""Refresh tokens are stored as SHA-256 hashes; a family groups every token since one login."""

from __future__ import annotations

import enum
import hashlib
import secrets

REDEEM_SQL = """
UPDATE refresh_tokens
   SET consumed_at = now()
 WHERE token_hash = %(hash)s AND consumed_at IS NULL AND expires_at > now()
RETURNING family_id
"""


class Redemption(enum.Enum):
    REDEEMED = "redeemed"
    ALREADY_CONSUMED = "already_consumed"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


class RefreshStore:
    def __init__(self, db, cache):
        self._db = db
        self._cache = cache  # Redis: results of recent redemptions, for the grace window

    def redeem(self, token: str, *, client_id: str) -> Redemption:
        row = self._db.fetch_one(REDEEM_SQL, {"hash": _hash(token)})
        if row is not None:
            return Redemption.REDEEMED.with_family(row["family_id"])
        return self._classify_failure(token, client_id)

    def remember_result(self, token: str, pair, *, ttl_s: int) -> None:
        self._cache.set(f"refresh:result:{_hash(token)}", pair.serialize(), ex=ttl_s)

    def revoke_family(self, family_id: str, *, reason: str) -> None:
        self._db.execute(
            "UPDATE token_families SET revoked_at = now(), revoked_reason = %s WHERE id = %s AND revoked_at IS NULL",
            (reason, family_id),
        )

    def new_refresh_token(self, family_id: str) -> str:
        token = secrets.token_urlsafe(32)
        self._db.execute(
            "INSERT INTO refresh_tokens (token_hash, family_id, expires_at) "
            "VALUES (%s, %s, now() + interval '30 days')",
            (_hash(token), family_id),
        )
        return token


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
''',
        cl=["token-refresh-outage"],
    ),
    C(
        "acme", "AUTH", "services/auth/keys.py", "acme/platform",
        "Signing key management: publishes next keys, promotes them for signing, keeps the previous key "
        "for verification until its tokens expire, then retires it.",
        r'''
"""RS256 signing keys in three phases: next (published), current (signing), previous (verify only)."""

from __future__ import annotations

import time
from dataclasses import dataclass

JWKS_CACHE_S = 10 * 60
RETIRE_AFTER_S = 15 * 60 + 5 * 60  # access token lifetime plus clock leeway


@dataclass
class KeyRing:
    current: str
    next: str | None = None
    previous: str | None = None
    promoted_at: float = 0.0

    def verification_keys(self) -> list[str]:
        return [k for k in (self.current, self.previous, self.next) if k]


def promote(ring: KeyRing, store, now: float | None = None) -> KeyRing:
    """Start signing with the next key; the current key stays valid for verification."""
    now = time.time() if now is None else now
    if ring.next is None:
        raise RuntimeError("publish a next key and wait one JWKS cache lifetime before promoting")
    if now - store.published_at(ring.next) < JWKS_CACHE_S:
        raise RuntimeError("next key published too recently; verifiers may not have it yet")
    return KeyRing(current=ring.next, previous=ring.current, promoted_at=now)


def retire_previous(ring: KeyRing, now: float | None = None) -> KeyRing:
    """Drop the previous key once no live token can have been signed with it."""
    now = time.time() if now is None else now
    if ring.previous and now - ring.promoted_at < RETIRE_AFTER_S:
        # Retiring early logs everybody out: the 14 March outage.
        raise RuntimeError("previous key still verifies live tokens")
    return KeyRing(current=ring.current, next=ring.next)


def sign(claims: dict, *, ttl_s: int) -> str:
    ring = _load_ring()
    now = int(time.time())
    return _jwt_encode({**claims, "iat": now, "exp": now + ttl_s}, key_id=ring.current)
''',
        cl=["token-refresh-outage"], sig=["token-refresh-outage-3"],
    ),
    C(
        "acme", "AUTH", "services/auth/login_handler.py", "acme/platform",
        "Login handler: checks the password, rate-limits attempts, and issues either a session or a "
        "short-lived MFA challenge when a second factor is required.",
        r'''
"""POST /login: password step, then (if needed) the second-factor step."""

from __future__ import annotations

from services.auth import audit_log, passwords, rate_limit, sessions, webauthn
from services.auth.tokens import issue_challenge, read_challenge

MFA_CHALLENGE_TTL_S = 120


def login(request):
    email, password = request.form["email"], request.form["password"]
    rate_limit.check_login(ip=request.remote_addr, account=email)
    user = passwords.verify(email, password)
    if user is None:
        rate_limit.record_failure(ip=request.remote_addr, account=email)
        return {"error": "invalid_credentials"}, 401
    if user.requires_second_factor and not _trusted_device(request, user):
        challenge = issue_challenge(user.id, audience="mfa", ttl_s=MFA_CHALLENGE_TTL_S)
        return {"mfa_required": True, "challenge": challenge, "methods": user.second_factor_methods}, 200
    audit_log.record("login", actor=user.id, ip=request.remote_addr)
    return sessions.start(user, amr=["pwd"])


def second_factor(request):
    user_id = read_challenge(request.json["challenge"], audience="mfa")  # single use, 2 minutes
    method = request.json["method"]
    if method == "webauthn":
        ok = webauthn.verify_assertion(user_id, request.json["assertion"])
    elif method == "totp":
        ok = passwords.verify_totp(user_id, request.json["code"])
    else:
        ok = passwords.use_recovery_code(user_id, request.json["code"])
    if not ok:
        rate_limit.record_failure(ip=request.remote_addr, account=user_id)
        return {"error": "invalid_second_factor"}, 401
    audit_log.record("login", actor=user_id, ip=request.remote_addr, method=method)
    return sessions.start_for(user_id, amr=["pwd", "mfa", method])


def _trusted_device(request, user) -> bool:
    cookie = request.cookies.get("acme_trusted_device")
    return bool(cookie) and user.trusts_device(cookie, request.headers.get("User-Agent", ""))
''',
        cl=["mfa-rollout"], dep=["services/auth/rate_limit.py", "services/auth/webauthn.py",
                                 "services/auth/audit_log.py"],
        sig=["mfa-failed-second-factor"],
    ),
    C(
        "acme", "AUTH", "services/auth/webauthn.py", "acme/platform",
        "WebAuthn registration and assertion verification for security keys and passkeys, with sign "
        "counter checks against cloned authenticators.",
        r'''
"""WebAuthn ceremonies (FIDO2). Attestation is recorded, not verified."""

from __future__ import annotations

from services.auth import challenges, credentials
from services.auth.vendor import fido2

RP_ID = "acme.example"
ORIGIN = "https://app.acme.example"


def registration_options(user) -> dict:
    challenge = challenges.create(user.id, purpose="webauthn.register")
    return {
        "rp": {"id": RP_ID, "name": "Acme"},
        "user": {"id": user.webauthn_handle, "name": user.email, "displayName": user.email},
        "challenge": challenge,
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8}],
        "authenticatorSelection": {"residentKey": "preferred", "userVerification": "preferred"},
        "excludeCredentials": [{"type": "public-key", "id": c.credential_id} for c in credentials.webauthn(user.id)],
    }


def verify_assertion(user_id: str, assertion: dict) -> bool:
    challenge = challenges.consume(user_id, purpose="webauthn.login")
    credential = credentials.find_webauthn(user_id, assertion["id"])
    if credential is None or challenge is None:
        return False
    result = fido2.verify_authentication(
        assertion, expected_challenge=challenge, expected_origin=ORIGIN, expected_rp_id=RP_ID,
        public_key=credential.public_key,
    )
    if result.sign_count and result.sign_count <= credential.sign_count:
        credentials.flag_possible_clone(credential)  # counters must increase unless the authenticator reports 0
        return False
    credentials.update_sign_count(credential, result.sign_count)
    return True
''',
        cl=["mfa-rollout"],
    ),
    C(
        "acme", "AUTH", "services/auth/oidc_client.py", "acme/platform",
        "OIDC connector for enterprise SSO: authorization code flow with PKCE, ID token validation with "
        "nonce checks, and redaction of IdP tokens in logs.",
        r'''
"""Enterprise SSO over OpenID Connect (authorization code + PKCE)."""

from __future__ import annotations

import logging

from services.auth import jwt, pkce
from services.auth.logging_redaction import redact_tokens

log = logging.getLogger(__name__)
ID_TOKEN_LEEWAY_S = 60


def authorization_url(connection, state_store) -> str:
    verifier, challenge = pkce.pair()
    nonce = state_store.new_nonce()
    state = state_store.save(connection_id=connection.id, verifier=verifier, nonce=nonce)
    return connection.authorization_endpoint + "?" + pkce.query(
        client_id=connection.client_id, redirect_uri=connection.redirect_uri, scope="openid email profile",
        state=state, nonce=nonce, code_challenge=challenge,
    )


def handle_callback(connection, state_store, http, code: str, state: str):
    saved = state_store.pop(state)
    response = http.post(connection.token_endpoint, data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": connection.redirect_uri,
        "client_id": connection.client_id, "code_verifier": saved.verifier,
    })
    if response.status_code != 200:
        log.warning("token exchange failed: %s", redact_tokens(response.json()))  # SSO-1: never log raw tokens
        raise SsoError("token exchange failed")
    tokens = response.json()
    claims = jwt.verify(tokens["id_token"], jwks=connection.jwks(), audience=connection.client_id,
                        issuer=connection.issuer, leeway_s=ID_TOKEN_LEEWAY_S)
    if claims.get("nonce") != saved.nonce:  # SSO-2
        raise SsoError("nonce mismatch")
    return connection.map_user(claims)  # matched by (connection, sub), never by email alone


class SsoError(Exception):
    pass
''',
        cl=["sso-oidc-migration"], dep=["services/auth/token_refresh.py"],
    ),
    C(
        "acme", "AUTH", "services/auth/rate_limit.py", "acme/platform",
        "Sliding-window rate limits for login attempts per IP and per account, stored in Redis, failing "
        "open with an alert when Redis is unavailable.",
        r'''
"""Login rate limits: 20 attempts per IP per minute, 10 failures per account per 15 minutes."""

from __future__ import annotations

import time

from services.auth import alerts, redis_client

IP_LIMIT, IP_WINDOW_S = 20, 60
ACCOUNT_LIMIT, ACCOUNT_WINDOW_S = 10, 15 * 60


class TooManyAttempts(Exception):
    def __init__(self, retry_after_s: int, captcha: bool):
        super().__init__("too many attempts")
        self.retry_after_s = retry_after_s
        self.captcha = captcha


def check_login(*, ip: str, account: str) -> None:
    now = time.time()
    try:
        ip_count = _count(f"rl:ip:{ip}", now, IP_WINDOW_S)
        account_failures = _count(f"rl:acct:{account.lower()}", now, ACCOUNT_WINDOW_S)
    except redis_client.Unavailable:
        alerts.fire("login_rate_limit_fail_open")
        return
    if ip_count >= IP_LIMIT:
        raise TooManyAttempts(retry_after_s=IP_WINDOW_S, captcha=False)
    if account_failures >= ACCOUNT_LIMIT:
        raise TooManyAttempts(retry_after_s=0, captcha=True)  # CAPTCHA instead of locking the account


def record_failure(*, ip: str, account: str) -> None:
    now = time.time()
    for key, window in ((f"rl:ip:{ip}", IP_WINDOW_S), (f"rl:acct:{account.lower()}", ACCOUNT_WINDOW_S)):
        redis_client.zadd(key, {str(now): now})
        redis_client.expire(key, window)


def _count(key: str, now: float, window_s: int) -> int:
    redis_client.zremrangebyscore(key, 0, now - window_s)
    return redis_client.zcard(key)
''',
        cl=["auth-hardening"], sig=["login-bruteforce"],
    ),
    C(
        "acme", "AUTH", "sdk/mobile/TokenRefresher.kt", "acme/mobile-sdk",
        "Android SDK token refresher: one in-flight token refresh per session behind a mutex, with a "
        "re-check after acquiring it and jittered proactive refresh.",
        r'''
package com.acme.sdk.auth

import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlin.random.Random

/**
 * Refreshes the access token at most once at a time per session. Callers that hit a 401 while a
 * refresh is running wait for it and reuse its result instead of starting their own.
 */
class TokenRefresher(
    private val store: TokenStore,
    private val api: AuthApi,
    private val clock: () -> Long = System::currentTimeMillis,
) {
    private val mutex = Mutex()

    suspend fun freshAccessToken(staleToken: String?): String = mutex.withLock {
        val current = store.accessToken()
        if (current != null && current.value != staleToken && !current.expiresWithin(clock(), 0)) {
            return current.value // someone else refreshed while we waited
        }
        val pair = api.refresh(store.refreshToken() ?: throw SignedOut())
        store.save(pair)
        pair.accessToken.value
    }

    /** Next proactive refresh: a random point between 80% and 95% of the token lifetime. */
    fun nextRefreshAt(issuedAt: Long, expiresAt: Long): Long {
        val lifetime = expiresAt - issuedAt
        return issuedAt + (lifetime * Random.nextDouble(0.80, 0.95)).toLong()
    }
}

class SignedOut : Exception("refresh token missing or revoked")
''',
        cl=["token-refresh-outage"],
    ),
    C(
        "acme", "AUTH", "services/auth/audit_log.py", "acme/platform",
        "Append-only audit events for logins, role changes, SSO configuration and API token changes, "
        "exported daily to the SIEM.",
        r'''
"""Audit events: append-only, one row per security-relevant action."""

from __future__ import annotations

import json
from datetime import datetime, timezone

ACTIONS = frozenset({
    "login", "logout", "mfa.enrolled", "mfa.reset", "role.changed", "sso.configured",
    "api_token.created", "api_token.revoked", "token_family.revoked",
})

INSERT_SQL = """
INSERT INTO audit_events (actor, action, target, before, after, ip, user_agent, at)
VALUES (%(actor)s, %(action)s, %(target)s, %(before)s, %(after)s, %(ip)s, %(user_agent)s, %(at)s)
"""


def record(action: str, *, actor: str, target: str | None = None, before=None, after=None,
           ip: str | None = None, user_agent: str | None = None, **extra) -> None:
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    _db().execute(INSERT_SQL, {
        "actor": actor, "action": action, "target": target,
        "before": json.dumps(before) if before is not None else None,
        "after": json.dumps({**(after or {}), **extra}) if (after or extra) else None,
        "ip": ip, "user_agent": user_agent, "at": datetime.now(timezone.utc),
    })


def export_day(day, sink) -> int:
    rows = _db().fetch_all("SELECT * FROM audit_events WHERE at::date = %s ORDER BY id", (day,))
    for row in rows:
        sink.write(json.dumps(row, default=str) + "\n")
    return len(rows)
''',
        cl=["auth-hardening"],
    ),
]  # fmt: skip

CODE += [
    # ---------------------------------------------------------------- acme PAY
    C(
        "acme", "PAY", "services/payments/capture.py", "acme/platform",
        "Captures authorised card payments with idempotency keys; resolves unknown outcomes by looking "
        "the capture up by key before any retry.",
        r'''
"""Card capture with idempotency: a retried capture can never charge twice."""

from __future__ import annotations

import hashlib

from services.payments import gateway_client, idempotency, ledger
from services.payments.gateway_client import Outcome

MAX_ATTEMPTS = 3


def capture_key(merchant_id: str, order_id: str, sequence: int) -> str:
    """Stable across retries; changes only for a deliberate new capture (split shipments)."""
    raw = f"{merchant_id}:{order_id}:capture:{sequence}".encode()
    return hashlib.sha256(raw).hexdigest()


def capture(payment, *, sequence: int = 1):
    key = capture_key(payment.merchant_id, payment.order_id, sequence)
    claimed = idempotency.claim(payment.merchant_id, key, request=payment.capture_request())
    if claimed.finished:
        return claimed.response  # same key, same answer
    for attempt in range(1, MAX_ATTEMPTS + 1):
        result = gateway_client.capture(payment, idempotency_key=key)
        if result.outcome is Outcome.UNKNOWN:
            result = gateway_client.find_capture(idempotency_key=key)  # did the first one go through?
        if result.outcome is Outcome.SUCCEEDED:
            idempotency.finish(payment.merchant_id, key, result.response)
            ledger.record_capture(payment, result.response, idempotency_key=key)
            return result.response
        if result.outcome is Outcome.DECLINED:
            idempotency.fail(payment.merchant_id, key, result.response)
            raise CaptureDeclined(result.response)
        if result.outcome is Outcome.UNKNOWN:
            idempotency.mark_unknown(payment.merchant_id, key)
            raise CaptureUnresolved(key)  # reconciliation decides; never capture again with a new key
        gateway_client.backoff(attempt)  # FAILED_BEFORE_SEND: safe to retry with the same key
    raise CaptureUnresolved(key)


class CaptureDeclined(Exception):
    pass


class CaptureUnresolved(Exception):
    pass
''',
        cl=["duplicate-charges"], dep=["services/payments/idempotency.py", "services/payments/gateway_client.py",
                                       "services/payments/ledger.py"],
        sig=["duplicate-charges-1"],
    ),
    C(
        "acme", "PAY", "services/payments/idempotency.py", "acme/platform",
        "Idempotency key store in Postgres: claims a key with a unique index, stores the gateway "
        "response, rejects reuse of a key with a different request.",
        r'''
"""payment_idempotency_keys: the unique index on (merchant_id, key) is the lock (ADR 021)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

CLAIM_SQL = """
INSERT INTO payment_idempotency_keys (merchant_id, key, state, request_hash, expires_at)
VALUES (%(merchant_id)s, %(key)s, 'pending', %(request_hash)s, now() + interval '24 hours')
ON CONFLICT (merchant_id, key) DO NOTHING
RETURNING key
"""


@dataclass(frozen=True)
class Claim:
    finished: bool
    response: dict | None = None


class KeyReusedWithDifferentRequest(Exception):
    """HTTP 422: the same idempotency key was sent with a different payload."""


def claim(merchant_id: str, key: str, *, request: dict) -> Claim:
    request_hash = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
    inserted = _db().fetch_one(CLAIM_SQL, {"merchant_id": merchant_id, "key": key, "request_hash": request_hash})
    if inserted:
        return Claim(finished=False)
    row = _db().fetch_one(
        "SELECT state, request_hash, response FROM payment_idempotency_keys WHERE merchant_id = %s AND key = %s",
        (merchant_id, key),
    )
    if row["request_hash"] != request_hash:
        raise KeyReusedWithDifferentRequest(key)
    return Claim(finished=row["state"] in ("succeeded", "failed"), response=row["response"])


def finish(merchant_id: str, key: str, response: dict) -> None:
    _set_state(merchant_id, key, "succeeded", response)


def mark_unknown(merchant_id: str, key: str) -> None:
    _set_state(merchant_id, key, "unknown", None)
''',
        cl=["duplicate-charges"], dep=["migrations/payments/0042_idempotency_keys.sql"],
    ),
    C(
        "acme", "PAY", "services/payments/gateway_client.py", "acme/platform",
        "HTTP client for the card gateway: connection pool, timeouts, Idempotency-Key headers, and the "
        "mapping of responses and errors to outcomes (succeeded, declined, failed before send, unknown).",
        r'''
"""The only way to call the card gateway. Timeouts after sending are UNKNOWN, never FAILED."""

from __future__ import annotations

import enum
import random
import time

import httpx

POOL = httpx.Limits(max_connections=40, max_keepalive_connections=20)
TIMEOUTS = httpx.Timeout(connect=1.0, read=10.0, write=5.0, pool=2.0)
_client = httpx.Client(base_url="https://api.cardgateway.example", limits=POOL, timeout=TIMEOUTS)


class Outcome(enum.Enum):
    SUCCEEDED = "succeeded"
    DECLINED = "declined"
    FAILED_BEFORE_SEND = "failed_before_send"
    UNKNOWN = "unknown"


def capture(payment, *, idempotency_key: str):
    return _post(f"/payments/{payment.gateway_id}/captures", payment.capture_request(), idempotency_key)


def find_capture(*, idempotency_key: str):
    response = _client.get("/captures", params={"idempotency_key": idempotency_key})
    return Result(Outcome.SUCCEEDED if response.json()["data"] else Outcome.FAILED_BEFORE_SEND, response.json())


def _post(path: str, body: dict, idempotency_key: str):
    try:
        response = _client.post(path, json=body, headers={"Idempotency-Key": idempotency_key})
    except (httpx.ConnectError, httpx.PoolTimeout):
        return Result(Outcome.FAILED_BEFORE_SEND, None)  # nothing reached the gateway
    except (httpx.ReadTimeout, httpx.RemoteProtocolError):
        return Result(Outcome.UNKNOWN, None)  # the gateway may have captured: resolve by key
    if response.status_code >= 500:
        return Result(Outcome.UNKNOWN, response.json())
    if response.status_code == 402:
        return Result(Outcome.DECLINED, response.json())
    response.raise_for_status()
    return Result(Outcome.SUCCEEDED, response.json())


def backoff(attempt: int) -> None:
    time.sleep(random.uniform(0, min(30.0, 2.0 * 4 ** (attempt - 1))))  # full jitter


class Result:
    def __init__(self, outcome: Outcome, response):
        self.outcome, self.response = outcome, response
''',
        cl=["duplicate-charges", "checkout-latency"], sig=["gateway-timeouts"],
    ),
    C(
        "acme", "PAY", "jobs/reconcile_captures.py", "acme/platform",
        "Nightly job that matches the gateway settlement report against ledger captures and files a "
        "ticket for every mismatch (gateway only, ledger only, duplicate, amount).",
        r'''
"""Reconcile gateway settlements with ledger captures. Runs at 02:30 UTC (hourly during rollouts)."""

from __future__ import annotations

import csv
from collections import defaultdict

from services.payments import ledger, tickets


def reconcile(settlement_path: str, day) -> dict[str, int]:
    settled = list(csv.DictReader(open(settlement_path, newline="")))
    _check_trailer(settlement_path, len(settled))
    ours = {c.gateway_capture_id: c for c in ledger.captures_on(day)}
    counts: dict[str, int] = defaultdict(int)
    by_order: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in settled:
        by_order[(row["merchant_id"], row["order_id"])].append(row)
        capture = ours.pop(row["capture_id"], None)
        if capture is None:
            tickets.open("gateway_only", row)
            counts["gateway_only"] += 1
        elif capture.amount_minor != int(row["amount_minor"]):
            tickets.open("amount", row, capture)
            counts["amount"] += 1
    for capture in ours.values():
        tickets.open("ledger_only", capture)
        counts["ledger_only"] += 1
    for (merchant, order), rows in by_order.items():
        if len({r["capture_sequence"] for r in rows}) < len(rows):  # same sequence captured twice
            tickets.open("duplicate", rows)
            counts["duplicate"] += 1
    return dict(counts)


def _check_trailer(path: str, rows: int) -> None:
    with open(path + ".trailer") as f:
        expected = int(f.read().strip())
    if expected != rows:
        raise RuntimeError(f"settlement file truncated: {rows} rows, trailer says {expected}")
''',
        cl=["duplicate-charges"], dep=["services/payments/ledger.py"],
    ),
    C(
        "acme", "PAY", "services/payments/webhooks.py", "acme/platform",
        "Receives gateway webhooks: verifies HMAC signatures, deduplicates by event id in the same "
        "transaction as the side effects, and dispatches payment and dispute events.",
        r'''
"""Gateway webhooks are delivered at least once and out of order."""

from __future__ import annotations

import hashlib
import hmac

from services.payments import disputes, ledger, refunds

HANDLERS = {
    "capture.succeeded": ledger.on_capture_succeeded,
    "refund.succeeded": refunds.on_refund_succeeded,
    "refund.failed": refunds.on_refund_failed,
    "dispute.created": disputes.on_dispute_created,
}


def receive(request, secret: bytes):
    signature = request.headers.get("Gateway-Signature", "")
    expected = hmac.new(secret, request.body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature, expected):
        return 401  # verify before dedupe, so forged events cannot burn event ids
    event = request.json()
    handler = HANDLERS.get(event["type"])
    if handler is None:
        return 200
    with _db().transaction() as tx:
        inserted = tx.fetch_one(
            "INSERT INTO processed_webhook_events (event_id) VALUES (%s) ON CONFLICT DO NOTHING RETURNING event_id",
            (event["id"],),
        )
        if not inserted:
            return 200  # redelivery: already processed
        handler(tx, event["data"]["object"])
    return 200
''',
        cl=["duplicate-charges", "payments-roadmap"], dep=["services/payments/ledger.py"],
    ),
    C(
        "acme", "PAY", "services/payments/ledger.py", "acme/platform",
        "Double-entry payments ledger: records captures and refunds as balanced transactions and "
        "rejects transactions whose entries do not sum to zero per currency.",
        r'''
"""Double-entry ledger. Every transaction balances per currency."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    account: str
    currency: str
    amount_minor: int  # positive debit, negative credit


class Unbalanced(Exception):
    pass


def post(tx, reference: str, entries: list[Entry]) -> None:
    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        totals[entry.currency] += entry.amount_minor
    if any(totals.values()):
        raise Unbalanced(f"{reference}: {dict(totals)}")
    tx_id = tx.fetch_one("INSERT INTO ledger_transactions (reference) VALUES (%s) RETURNING id", (reference,))["id"]
    tx.executemany(
        "INSERT INTO ledger_entries (transaction_id, account, currency, amount_minor) VALUES (%s, %s, %s, %s)",
        [(tx_id, e.account, e.currency, e.amount_minor) for e in entries],
    )


def record_capture(payment, response, *, idempotency_key: str) -> None:
    amount = response["amount_minor"]
    with _db().transaction() as tx:
        post(tx, f"capture:{idempotency_key}", [
            Entry("gateway_receivable", payment.currency, amount),
            Entry(f"merchant_payable:{payment.merchant_id}", payment.currency, -amount),
        ])


def record_refund(payment, refund_id: str, amount: int, reason: str) -> None:
    with _db().transaction() as tx:
        post(tx, f"refund:{refund_id}:{reason}", [
            Entry(f"merchant_payable:{payment.merchant_id}", payment.currency, amount),
            Entry("gateway_receivable", payment.currency, -amount),
        ])
''',
        cl=["duplicate-charges"],
    ),
    C(
        "acme", "PAY", "migrations/payments/0042_idempotency_keys.sql", "acme/platform",
        "Migration creating payment_idempotency_keys with the unique index used as a lock and an index "
        "for the expiry clean-up job.",
        r'''
-- 0042: idempotency keys for captures, refunds and voids (ADR 021).
BEGIN;

CREATE TYPE idempotency_state AS ENUM ('pending', 'succeeded', 'failed', 'unknown');

CREATE TABLE payment_idempotency_keys (
    merchant_id   uuid              NOT NULL,
    key           text              NOT NULL,
    state         idempotency_state NOT NULL DEFAULT 'pending',
    request_hash  text              NOT NULL,
    response      jsonb,
    created_at    timestamptz       NOT NULL DEFAULT now(),
    updated_at    timestamptz       NOT NULL DEFAULT now(),
    expires_at    timestamptz       NOT NULL,
    CONSTRAINT payment_idempotency_keys_pkey PRIMARY KEY (merchant_id, key)
);

-- The clean-up job deletes expired keys in batches of 10,000.
CREATE INDEX payment_idempotency_keys_expires_at ON payment_idempotency_keys (expires_at);

-- Unresolved captures are picked up by the hourly reconciliation.
CREATE INDEX payment_idempotency_keys_unknown
    ON payment_idempotency_keys (created_at)
    WHERE state = 'unknown';

COMMIT;
''',
        cl=["duplicate-charges"],
    ),
    C(
        "acme", "PAY", "services/checkout/handler.py", "acme/platform",
        "Checkout request handler: locks the cart, prices it, reserves stock, authorises the card within "
        "a total deadline, and publishes order.authorised for asynchronous fraud scoring.",
        r'''
"""POST /checkout. Total deadline 3 s, passed down to every dependency."""

from __future__ import annotations

from services.checkout import carts, deadlines, events, fraud_client, inventory, pricing
from services.payments import authorisations

CHECKOUT_DEADLINE_S = 3.0


def checkout(request, flags):
    deadline = deadlines.start(CHECKOUT_DEADLINE_S)
    with carts.lock(request.cart_id, timeout=deadline.remaining(0.05)) as cart:
        with deadline.span("pricing"):
            priced = pricing.price(cart, currency=request.currency, deadline=deadline)
        with deadline.span("inventory"):
            inventory.reserve(priced.lines, deadline=deadline)
        if not flags.enabled("checkout.fraud_async", merchant=cart.merchant_id):
            with deadline.span("fraud"):
                score = fraud_client.score(priced, deadline=deadline)  # inline: 700 ms at p95
                if score.high_risk:
                    return {"status": "rejected"}, 402
        with deadline.span("authorisation"):
            auth = authorisations.authorise(priced, request.payment_method, deadline=deadline)
        order = carts.to_order(cart, priced, auth, status="pending_risk")
    events.publish("order.authorised", {"order_id": order.id, "merchant_id": order.merchant_id})
    return {"status": "ok", "order_id": order.id}, 201
''',
        cl=["checkout-latency"], dep=["services/checkout/pricing.py", "services/checkout/fraud_client.py",
                                      "services/payments/gateway_client.py"],
        sig=["checkout-latency-1"],
    ),
    C(
        "acme", "PAY", "services/checkout/pricing.py", "acme/platform",
        "Pricing pipeline for carts: promotions, loyalty discounts (applied once per line), EU VAT and "
        "cached currency conversion.",
        r'''
"""Pricing rules run in order and must be idempotent: re-pricing a priced cart changes nothing."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from services.checkout import fx_cache, promotions, tax

RULES = ("catalogue", "promotions", "loyalty", "tax", "conversion")


def price(cart, *, currency: str, deadline) -> "PricedCart":
    lines = [line.copy() for line in cart.lines]
    for line in lines:
        promotions.apply(line, cart.merchant_id)
        if cart.loyalty_card and "loyalty" not in line.applied_rules:
            # The café ½ price bug: this ran again when receipts re-priced lines.
            line.unit_price_minor = _round(line.unit_price_minor * (1 - cart.loyalty_card.discount))
            line.applied_rules.add("loyalty")
        tax.apply(line, buyer_country=cart.buyer_country, vat_id=cart.buyer_vat_id)
    rate = fx_cache.rate(cart.currency, currency, max_age_s=300)  # cached, was fetched per call
    return PricedCart(lines=[line.converted(rate) for line in lines], currency=currency, fx_rate=rate)


def _round(amount) -> int:
    return int(Decimal(amount).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


class PricedCart:
    def __init__(self, lines, currency, fx_rate):
        self.lines, self.currency, self.fx_rate = lines, currency, fx_rate

    @property
    def total_minor(self) -> int:
        return sum(line.total_minor for line in self.lines)
''',
        cl=["checkout-latency"],
    ),
    C(
        "acme", "PAY", "services/checkout/fraud_client.py", "acme/platform",
        "Client for the fraud scoring vendor, used inline (legacy) or from the asynchronous scoring "
        "worker that confirms, holds or voids authorised orders.",
        r'''
"""Fraud scores from the vendor. Async mode: score after authorisation, hold fulfilment, not checkout."""

from __future__ import annotations

import httpx

from services.checkout import orders
from services.payments import authorisations

HIGH_RISK = 0.85
_client = httpx.Client(base_url="https://risk.vendor.example/v3", timeout=httpx.Timeout(1.5, connect=0.5))


class Score:
    def __init__(self, value: float):
        self.value = value
        self.high_risk = value >= HIGH_RISK


def score(priced, *, deadline=None) -> Score:
    timeout = deadline.remaining(0.05) if deadline else 1.5
    response = _client.post("/score", json=priced.risk_payload(), timeout=timeout)
    response.raise_for_status()
    return Score(response.json()["score"])


def on_order_authorised(event) -> None:
    """Worker for order.authorised (checkout.fraud_async)."""
    order = orders.get(event["order_id"])
    result = score(order.priced)
    if not result.high_risk:
        orders.set_status(order, "confirmed")
    elif orders.manual_review(order, result.value) == "rejected":
        authorisations.void(order.authorisation_id)
        orders.set_status(order, "cancelled")
    else:
        orders.set_status(order, "confirmed")
''',
        cl=["checkout-latency"], sig=["checkout-latency-2"],
    ),
]  # fmt: skip

CODE += [
    # ---------------------------------------------------------------- acme SEARCH
    C(
        "acme", "SEARCH", "services/search/ranking.py", "acme/platform",
        "Ranks product search results: BM25 with field boosts, stock-based business factors, then the "
        "learning-to-rank model over the top 200.",
        r'''
"""Two-stage ranking: lexical retrieval with business factors, then LTR re-ranking."""

from __future__ import annotations

from services.search import ltr_features, models, synonyms

FIELD_BOOSTS = {"title": 3.0, "brand": 2.0, "category": 1.5, "description": 1.0}
STOCK_FACTOR = {"in_stock": 1.0, "low_stock": 0.8, "out_of_stock": 0.5}
RERANK_DEPTH = 200


def search(index, query, *, locale: str, size: int = 48):
    terms = synonyms.expand(query.terms, locale=locale)
    candidates = index.bm25(terms, fields=FIELD_BOOSTS, filters=query.filters, size=RERANK_DEPTH)
    for hit in candidates:
        if not hit.exact_title_match(query.text):  # exact names stay findable when out of stock
            hit.score *= STOCK_FACTOR[hit.source["availability"]]
    candidates.sort(key=lambda h: (-h.score, h.id))
    model = models.current("ranking")
    features = ltr_features.for_hits(query, candidates)
    reranked = model.predict(features)
    ordered = sorted(zip(candidates, reranked), key=lambda pair: (-pair[1], pair[0].id))
    return [hit for hit, _ in ordered[:size]]
''',
        cl=["relevance-tuning"], dep=["services/search/synonyms.py", "services/search/ltr_features.py",
                                      "services/search/analyzer.py"],
        sig=["ltr-model-deploy"],
    ),
    C(
        "acme", "SEARCH", "services/search/synonyms.py", "acme/platform",
        "Query-time synonym expansion from the curated dictionary, with one-way synonyms and a lower "
        "weight for expanded terms.",
        r'''
"""Synonyms are expanded at query time so dictionary changes need no reindex."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

EXPANSION_WEIGHT = 0.6


@dataclass(frozen=True)
class Term:
    text: str
    weight: float = 1.0


@functools.lru_cache(maxsize=8)
def _dictionary(locale: str) -> dict[str, list[str]]:
    with open(f"dictionaries/synonyms.{locale}.json", encoding="utf-8") as f:
        raw = json.load(f)
    table: dict[str, list[str]] = {}
    for group in raw["equivalent"]:  # sofa <-> couch <-> settee
        for word in group:
            table.setdefault(word, []).extend(w for w in group if w != word)
    for source, targets in raw["one_way"].items():  # tee -> t-shirt, never t-shirt -> tee
        table.setdefault(source, []).extend(targets)
    return table


def expand(terms: list[str], *, locale: str) -> list[Term]:
    table = _dictionary(locale)
    expanded = [Term(t) for t in terms]
    for t in terms:
        expanded += [Term(s, EXPANSION_WEIGHT) for s in table.get(t, []) if s not in terms]
    return expanded
''',
        cl=["relevance-tuning"],
    ),
    C(
        "acme", "SEARCH", "services/search/analyzer.py", "acme/platform",
        "Text analysis for indexing and queries: tokenising, accent folding that keeps the original "
        "token, stemming per locale and size/colour tagging.",
        r'''
"""Analyzer shared by indexing and querying; both sides must change together (reindex)."""

from __future__ import annotations

import re
import unicodedata

from services.search import stemmers, taggers

TOKEN = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)


def fold(token: str) -> str:
    """crème -> creme, Müsli -> musli, Zoë -> zoe."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def analyze(text: str, *, locale: str, for_query: bool = False) -> list[str]:
    tokens = [t.lower() for t in TOKEN.findall(text)]
    out: list[str] = []
    for token in tokens:
        folded = fold(token)
        out.append(stemmers.stem(folded, locale))
        if folded != token:
            out.append(token)  # keep the accented form so an exact accented match scores higher
    return out


def understand(query: str, *, locale: str):
    """Split sizes, colours and materials out of the free text: 'red dress 38'."""
    tags = taggers.tag(query, locale=locale)
    text = " ".join(w for w in query.split() if w not in tags.tagged_words)
    return text, tags.filters
''',
        cl=["relevance-tuning"],
    ),
    C(
        "acme", "SEARCH", "services/search/indexer.py", "acme/platform",
        "Indexing consumer: reads catalogue change events from the live and bulk topics (live first), "
        "coalesces events per product and writes index updates.",
        r'''
"""Catalogue events -> search index. Live updates always go before bulk imports."""

from __future__ import annotations

import time

from services.search import index_client, metrics
from services.search.kafka import Consumer

COALESCE_WINDOW_S = 2.0
BATCH = 500


def run(consumer: Consumer) -> None:
    pending: dict[str, dict] = {}
    window_start = time.monotonic()
    while True:
        events = consumer.poll("catalogue.live", max_records=BATCH)
        if not events:  # bulk imports only when no live update waits
            events = consumer.poll("catalogue.bulk", max_records=BATCH)
        for event in events:
            product = pending.setdefault(event.product_id, {})
            product.update(event.changes)  # later changes win; one index write per product
            metrics.consumer_lag_seconds.labels(topic=event.topic).set(time.time() - event.timestamp)
        if pending and (time.monotonic() - window_start >= COALESCE_WINDOW_S or len(pending) >= BATCH):
            index_client.bulk_update("products", pending)
            consumer.commit()
            pending.clear()
            window_start = time.monotonic()
''',
        cl=["index-lag"], sig=["index-lag-2"],
    ),
    C(
        "acme", "SEARCH", "services/search/reindex.py", "acme/platform",
        "Zero-downtime reindex: builds a versioned index from a catalogue snapshot, replays live updates "
        "from the snapshot offset, compares, and swaps the read alias.",
        r'''
"""searchctl index create/load/replay/compare, then alias swap."""

from __future__ import annotations

from services.search import catalogue, index_client
from services.search.kafka import Consumer


def rebuild(version: int, mapping: dict) -> str:
    name = f"products_v{version}"
    index_client.create(name, mapping)
    snapshot = catalogue.snapshot()
    index_client.bulk_load(name, snapshot.documents(), batch_size=5_000)
    Consumer.replay("catalogue.live", from_offset=snapshot.kafka_offset, into=name)
    return name


def compare(current: str, candidate: str, judged_queries) -> dict:
    counts = index_client.count(current), index_client.count(candidate)
    drift = abs(counts[0] - counts[1]) / max(counts[0], 1)
    ndcg = judged_queries.ndcg_at_10(current), judged_queries.ndcg_at_10(candidate)
    return {"count_drift": drift, "ndcg_delta": ndcg[1] - ndcg[0], "ok": drift < 0.001 and ndcg[1] - ndcg[0] > -0.005}


def swap(alias: str, candidate: str) -> None:
    previous = index_client.alias_target(alias)
    index_client.update_aliases([
        {"remove": {"index": previous, "alias": alias}},
        {"add": {"index": candidate, "alias": alias}},
    ])  # atomic; keep `previous` for 24 hours to roll back
''',
        cl=["index-lag"], dep=["services/search/indexer.py", "services/search/analyzer.py"],
    ),
    C(
        "acme", "SEARCH", "services/search/ltr_features.py", "acme/platform",
        "Features for the learning-to-rank model: per-field BM25, synonym match, availability, price "
        "percentile and smoothed click-through rate.",
        r'''
"""Features of (query, product) pairs for the LambdaMART ranking model."""

from __future__ import annotations

from services.search import feature_store

FEATURES = (
    "bm25_title", "bm25_brand", "bm25_category", "bm25_description",
    "synonym_match", "in_stock", "price_percentile_in_category", "ctr_smoothed", "days_since_listed",
)
CTR_PRIOR_CLICKS, CTR_PRIOR_IMPRESSIONS = 2.0, 100.0


def ctr_smoothed(clicks: int, impressions: int) -> float:
    """Bayesian average, so a product with 1 click out of 1 impression does not rank first."""
    return (clicks + CTR_PRIOR_CLICKS) / (impressions + CTR_PRIOR_IMPRESSIONS)


def for_hits(query, hits) -> list[list[float]]:
    stats = feature_store.product_stats([h.id for h in hits])
    rows = []
    for hit in hits:
        s = stats[hit.id]
        rows.append([
            hit.field_scores.get("title", 0.0), hit.field_scores.get("brand", 0.0),
            hit.field_scores.get("category", 0.0), hit.field_scores.get("description", 0.0),
            1.0 if hit.matched_synonym else 0.0,
            1.0 if hit.source["availability"] == "in_stock" else 0.0,
            s.price_percentile, ctr_smoothed(s.clicks_28d, s.impressions_28d), float(s.days_since_listed),
        ])
    return rows
''',
        cl=["relevance-tuning"],
    ),
    C(
        "acme", "SEARCH", "web/search/useSearch.ts", "acme/storefront",
        "React hook for the storefront search box: debounced queries, cancellation of stale requests, "
        "and size/colour filters from query understanding.",
        r'''
import { useEffect, useRef, useState } from "react";

export interface SearchResult {
  id: string;
  title: string;
  priceMinor: number;
  currency: string;
  availability: "in_stock" | "low_stock" | "out_of_stock";
}

interface SearchState {
  results: SearchResult[];
  filters: Record<string, string>;
  loading: boolean;
}

export function useSearch(query: string, locale: string, debounceMs = 150): SearchState {
  const [state, setState] = useState<SearchState>({ results: [], filters: {}, loading: false });
  const controller = useRef<AbortController | null>(null);

  useEffect(() => {
    if (query.trim().length < 2) {
      setState({ results: [], filters: {}, loading: false });
      return;
    }
    const timer = setTimeout(async () => {
      controller.current?.abort(); // a newer query replaces the stale request
      controller.current = new AbortController();
      setState((s) => ({ ...s, loading: true }));
      const params = new URLSearchParams({ q: query, locale });
      const response = await fetch(`/api/search?${params}`, { signal: controller.current.signal });
      const body = await response.json();
      setState({ results: body.results, filters: body.detectedFilters, loading: false });
    }, debounceMs);
    return () => clearTimeout(timer);
  }, [query, locale, debounceMs]);

  return state;
}
''',
        cl=["relevance-tuning"],
    ),
]  # fmt: skip

CODE += [
    # ---------------------------------------------------------------- globex CORE
    C(
        "globex", "CORE", "core/auth/session_tokens.go", "globex/core",
        "Issues and validates session tokens (JWT): signature, tenant claim, and exp/nbf checks with a "
        "configurable clock skew leeway.",
        r'''
package auth

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultLeeway tolerates clock skew between API nodes (it was zero before the early expiry incident).
const DefaultLeeway = 60 * time.Second

var ErrWrongTenant = errors.New("session token issued for another tenant")

type SessionClaims struct {
	Tenant string   `json:"tenant"`
	Roles  []string `json:"roles"`
	SID    string   `json:"sid"`
	jwt.RegisteredClaims
}

type Validator struct {
	Keys   KeySet
	Leeway time.Duration
	Now    func() time.Time
}

// Validate checks a session token for the tenant of the request.
func (v *Validator) Validate(raw, tenant string) (*SessionClaims, error) {
	claims := &SessionClaims{}
	parser := jwt.NewParser(
		jwt.WithLeeway(v.Leeway),
		jwt.WithTimeFunc(v.Now),
		jwt.WithValidMethods([]string{"HS256", "EdDSA"}),
		jwt.WithIssuedAt(),
	)
	if _, err := parser.ParseWithClaims(raw, claims, v.Keys.Lookup); err != nil {
		return nil, err
	}
	if claims.Tenant != tenant {
		return nil, ErrWrongTenant
	}
	if Revoked(claims.SID) {
		return nil, jwt.ErrTokenInvalidId
	}
	return claims, nil
}
''',
        cl=["session-token-expiry"], dep=["core/auth/clock.go"], sig=["session-expiry-1"],
    ),
    C(
        "globex", "CORE", "core/auth/refresh.go", "globex/core",
        "Token refresh endpoint for the mobile app: rotates device-bound refresh tokens, replays the last "
        "result within a grace period, and revokes the family on reuse.",
        r'''
package auth

import (
	"context"
	"errors"
	"time"
)

const (
	SessionTTL  = time.Hour
	RefreshTTL  = 30 * 24 * time.Hour
	GracePeriod = 10 * time.Second
)

var ErrReuse = errors.New("refresh token reuse detected")

type RefreshRequest struct {
	RefreshToken string `json:"refresh_token"`
	DeviceID     string `json:"device_id"`
}

// Refresh handles POST /v2/session/refresh.
func (s *Service) Refresh(ctx context.Context, req RefreshRequest) (*TokenPair, error) {
	token, err := s.store.Consume(ctx, hash(req.RefreshToken), req.DeviceID)
	switch {
	case err == nil:
		pair, err := s.issue(ctx, token.FamilyID, token.Subject, req.DeviceID)
		if err == nil {
			s.store.RememberResult(ctx, hash(req.RefreshToken), pair, GracePeriod)
		}
		return pair, err
	case errors.Is(err, ErrAlreadyConsumed):
		// Lost response or two concurrent refreshes from the app: replay, do not revoke.
		if pair, ok := s.store.RecentResult(ctx, hash(req.RefreshToken), req.DeviceID); ok {
			s.metrics.RefreshReplayed.Inc()
			return pair, nil
		}
		s.store.RevokeFamily(ctx, token.FamilyID, "reuse")
		return nil, ErrReuse
	default:
		return nil, err
	}
}
''',
        cl=["session-token-expiry"], dep=["core/auth/session_tokens.go"],
    ),
    C(
        "globex", "CORE", "core/auth/clock.go", "globex/core",
        "Clock offset checks for API nodes: reads the NTP offset, exports it as a metric and fails the "
        "readiness check when drift exceeds ten seconds.",
        r'''
package auth

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const (
	DriftWarn  = 1 * time.Second
	DriftDrain = 10 * time.Second
)

var clockOffset = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "node_clock_offset_seconds",
	Help: "Offset from the NTP reference reported by chrony.",
})

type OffsetSource interface {
	Offset() (time.Duration, error) // chronyc tracking: "System time"
}

// ClockCheck is registered as a readiness check: a drifting node leaves the load balancer.
func ClockCheck(src OffsetSource) func() error {
	return func() error {
		offset, err := src.Offset()
		if err != nil {
			return fmt.Errorf("no NTP source selected: %w", err)
		}
		clockOffset.Set(offset.Seconds())
		if time.Duration(math.Abs(float64(offset))) > DriftDrain {
			return fmt.Errorf("clock offset %s exceeds %s", offset, DriftDrain)
		}
		return nil
	}
}
''',
        cl=["session-token-expiry"], sig=["session-expiry-2"],
    ),
    C(
        "globex", "CORE", "core/gateway/ratelimit.go", "globex/core",
        "API gateway rate limiting: token buckets per tenant and route class and per internal client, "
        "answering 429 with Retry-After.",
        r'''
package gateway

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

type bucketKey struct {
	Tenant, RouteClass, Client string
}

type Limiter struct {
	mu      sync.Mutex
	buckets map[bucketKey]*bucket
	plans   PlanLimits
}

type bucket struct {
	tokens float64
	last   time.Time
}

// Allow takes one token; the second result says how long to wait when there is none.
func (l *Limiter) Allow(k bucketKey, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rate, burst := l.plans.For(k)
	b, ok := l.buckets[k]
	if !ok {
		b = &bucket{tokens: burst, last: now}
		l.buckets[k] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	b.tokens--
	return true, 0
}

func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait := l.Allow(keyOf(r), time.Now())
		if !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			http.Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}
''',
        cl=["retry-storm"],
    ),
    C(
        "globex", "CORE", "core/gateway/retry_budget.go", "globex/core",
        "Retry budget and backoff for the internal SDK client: retries cost tokens earned by successes, "
        "with exponential backoff, full jitter and Retry-After support.",
        r'''
package gateway

import (
	"math/rand"
	"net/http"
	"sync"
	"time"
)

// RetryBudget allows retries worth 10% of successful requests, so retries cannot multiply load.
type RetryBudget struct {
	mu     sync.Mutex
	tokens float64
	max    float64
}

func NewRetryBudget() *RetryBudget { return &RetryBudget{tokens: 10, max: 100} }

func (b *RetryBudget) OnSuccess() {
	b.mu.Lock()
	b.tokens = min(b.max, b.tokens+0.1)
	b.mu.Unlock()
}

func (b *RetryBudget) TryRetry() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Backoff returns the wait before retry n (1-based): full jitter, capped, Retry-After wins.
func Backoff(n int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp); ok {
			return d
		}
	}
	ceiling := min(10*time.Second, 100*time.Millisecond<<n)
	return time.Duration(rand.Int63n(int64(ceiling)))
}

func Retryable(req *http.Request, resp *http.Response, err error) bool {
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodPut ||
		req.Header.Get("Idempotency-Key") != ""
	return idempotent && (err != nil || resp.StatusCode == 503 || resp.StatusCode == 429)
}
''',
        cl=["retry-storm"], dep=["core/gateway/ratelimit.go"], sig=["retry-storm-1"],
    ),
    C(
        "globex", "CORE", "core/platform/flags.go", "globex/core",
        "Feature flag client: evaluates flags locally from a snapshot streamed by the flags service, per "
        "tenant and user, and never blocks a request on the flags service.",
        r'''
package platform

import (
	"hash/fnv"
	"sync/atomic"
)

type Flag struct {
	Key       string
	Enabled   bool
	Tenants   map[string]bool
	PercentOn uint32 // 0-100, by hash of the user id
}

type Flags struct {
	snapshot atomic.Pointer[map[string]Flag]
}

// Update replaces the snapshot; called by the stream from the flags service.
func (f *Flags) Update(flags map[string]Flag) { f.snapshot.Store(&flags) }

// Enabled never blocks: with no snapshot yet, every flag is off.
func (f *Flags) Enabled(key, tenant, user string) bool {
	snap := f.snapshot.Load()
	if snap == nil {
		return false
	}
	flag, ok := (*snap)[key]
	if !ok || !flag.Enabled {
		return false
	}
	if on, listed := flag.Tenants[tenant]; listed {
		return on
	}
	h := fnv.New32a()
	h.Write([]byte(key + ":" + user))
	return h.Sum32()%100 < flag.PercentOn
}
''',
        cl=["core-platform"], sig=["go-upgrade-deploy"],
    ),
    C(
        "globex", "CORE", "core/platform/shutdown.go", "globex/core",
        "Graceful shutdown for HTTP servers: on SIGTERM fail readiness, wait for the load balancer, then "
        "drain in-flight requests for up to 25 seconds.",
        r'''
package platform

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	deregisterDelay = 5 * time.Second
	drainTimeout    = 25 * time.Second
)

var ready atomic.Bool

func ReadinessHandler(w http.ResponseWriter, _ *http.Request) {
	if !ready.Load() {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Serve runs srv until SIGTERM, then drains instead of dropping requests.
func Serve(srv *http.Server) error {
	ready.Store(true)
	errs := make(chan error, 1)
	go func() { errs <- srv.ListenAndServe() }()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errs:
		return err
	case <-stop:
	}
	ready.Store(false)
	slog.Info("draining", "delay", deregisterDelay)
	time.Sleep(deregisterDelay) // the load balancer still sends traffic for a few seconds
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	return srv.Shutdown(ctx)
}
''',
        cl=["core-platform", "retry-storm"],
    ),
    C(
        "globex", "CORE", "core/db/pool.go", "globex/core",
        "Shared Postgres connection pool settings for Globex services: connection caps, acquire timeout "
        "and health checks, sized for PgBouncer transaction pooling.",
        r'''
package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults sized from measured concurrency (p99 12 per node); the failover hit max_connections at 100.
const (
	MaxConns          = 20
	MinConns          = 2
	AcquireTimeout    = 2 * time.Second
	MaxConnLifetime   = 30 * time.Minute
	HealthCheckPeriod = 15 * time.Second
)

func NewPool(ctx context.Context, dsn, service string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: bad dsn: %w", service, err)
	}
	cfg.MaxConns = MaxConns
	cfg.MinConns = MinConns
	cfg.MaxConnLifetime = MaxConnLifetime
	cfg.HealthCheckPeriod = HealthCheckPeriod
	cfg.ConnConfig.RuntimeParams["application_name"] = service
	// PgBouncer in transaction mode: no server-side prepared statements.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgxpool.NewWithConfig(ctx, cfg)
}

// Acquire bounds the wait so a saturated pool fails fast instead of piling up requests.
func Acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, AcquireTimeout)
	defer cancel()
	return pool.Acquire(ctx)
}
''',
        cl=["core-platform"], sig=["db-failover"],
    ),
    # ---------------------------------------------------------------- globex BILLING
    C(
        "globex", "BILLING", "billing/retry_scheduler.py", "globex/billing",
        "Schedules retries of failed invoice payments around the customer's usual payday, skipping "
        "weekends and holidays, at most four attempts in 21 days.",
        r'''
"""Payday-aware retry schedule for failed invoice payments (ADR 009)."""

from __future__ import annotations

from datetime import date, timedelta

from billing import calendars, payment_history

MAX_ATTEMPTS = 4
WINDOW_DAYS = 21
FALLBACK_OFFSETS = (1, 3, 5, 7)
RETRYABLE = {"soft", "technical", "token"}


def next_attempt(invoice, failure_class: str, today: date) -> date | None:
    """The day of the next retry, or None when the invoice goes to dunning only."""
    if failure_class not in RETRYABLE or invoice.attempts >= MAX_ATTEMPTS:
        return None
    deadline = invoice.first_failure + timedelta(days=WINDOW_DAYS)
    payday = payment_history.usual_payment_day(invoice.customer_id)  # day of month, or None
    candidates = []
    if payday is not None:
        for month_offset in (0, 1):
            base = _day_in_month(today, payday, month_offset)
            candidates += [base + timedelta(days=1), base + timedelta(days=2)]
    candidates += [invoice.first_failure + timedelta(days=d) for d in FALLBACK_OFFSETS]
    country = invoice.customer_country
    for day in sorted(c for c in candidates if today < c <= deadline):
        if calendars.is_business_day(day, country):
            return day
    return None


def _day_in_month(today: date, day_of_month: int, month_offset: int) -> date:
    first = (today.replace(day=1) + timedelta(days=32 * month_offset)).replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    return first.replace(day=min(day_of_month, last.day))
''',
        cl=["invoice-retries"], dep=["billing/charge.py"],
    ),
    C(
        "globex", "BILLING", "billing/charge.py", "globex/billing",
        "Charges an invoice attempt exactly once: records the attempt under a unique constraint, calls the "
        "payment provider with an idempotency key, and applies the double charge guard.",
        r'''
"""One charge per (invoice_id, attempt_number), whatever the queue does."""

from __future__ import annotations

from billing import alerts, db, provider

DOUBLE_CHARGE_WINDOW_H = 24


class AttemptOwnedElsewhere(Exception):
    pass


class DoubleChargeBlocked(Exception):
    pass


def charge_attempt(invoice, attempt_number: int):
    key = f"{invoice.id}:{attempt_number}"
    with db.transaction() as tx:
        inserted = tx.fetch_one(
            "INSERT INTO charge_attempts (invoice_id, attempt_number, state) VALUES (%s, %s, 'in_flight') "
            "ON CONFLICT DO NOTHING RETURNING invoice_id",
            (invoice.id, attempt_number),
        )
        if not inserted:
            raise AttemptOwnedElsewhere(key)  # another worker got the same job
        if tx.fetch_one(
            "SELECT 1 FROM charges WHERE invoice_id = %s AND state = 'succeeded' "
            "AND created_at > now() - make_interval(hours => %s)",
            (invoice.id, DOUBLE_CHARGE_WINDOW_H),
        ):
            alerts.page("DoubleChargeGuardFired", invoice_id=invoice.id)
            raise DoubleChargeBlocked(key)
    result = provider.charge(
        token=invoice.payment_method_token, amount_minor=invoice.amount_due_minor,
        currency=invoice.currency, idempotency_key=key,
    )
    if result.decline_code == "token_expired":
        result.failure_class = "token"  # re-tokenise, then retry (BILLING-107)
    db.record_charge_result(invoice.id, attempt_number, result)
    return result
''',
        cl=["invoice-retries"], sig=["invoice-retries-4", "invoice-retries-3"],
    ),
    C(
        "globex", "BILLING", "billing/dunning.py", "globex/billing",
        "Dunning sequence for unpaid invoices: reminder emails on day 0, 7 and 14, each step sent at "
        "most once, with signed links to the billing portal.",
        r'''
"""Dunning emails. A step is recorded before its email is sent, so re-queued jobs never resend."""

from __future__ import annotations

from datetime import timedelta

from billing import db, emails, portal_links

STEPS = (
    (0, "payment_failed"),
    (7, "update_payment_method"),
    (14, "final_notice"),
)
SUSPEND_AFTER = timedelta(days=21)


def run_for(invoice, today) -> str | None:
    elapsed = (today - invoice.first_failure).days
    due = [(day, template) for day, template in STEPS if elapsed >= day]
    if not due:
        return None
    day, template = due[-1]
    inserted = db.fetch_one(
        "INSERT INTO dunning_events (invoice_id, step) VALUES (%s, %s) ON CONFLICT DO NOTHING RETURNING step",
        (invoice.id, template),
    )
    if not inserted:
        return None  # already sent: the duplicate dunning emails of July came from here
    link = portal_links.signed(invoice.customer_id, purpose="update_payment_method", single_use=True)
    emails.send(invoice.customer_email, template, locale=invoice.customer_locale,
                invoice_number=invoice.number, amount=invoice.amount_due_display, link=link)
    return template
''',
        cl=["invoice-retries", "billing-upkeep"],
    ),
    C(
        "globex", "BILLING", "billing/invoices/render.py", "globex/billing",
        "Renders invoices and credit notes from an HTML template to PDF, with totals computed once, "
        "subset fonts and asynchronous rendering for large usage invoices.",
        r'''
"""Invoice PDF rendering. Large invoices are rendered in the background."""

from __future__ import annotations

from collections import defaultdict

from billing import jobs, templates
from billing.invoices import pdf

ASYNC_LINE_THRESHOLD = 500


def render(invoice, *, locale: str) -> bytes | str:
    if len(invoice.lines) > ASYNC_LINE_THRESHOLD:
        return jobs.enqueue("render_invoice", invoice_id=invoice.id, locale=locale)  # download link later
    return _render_now(invoice, locale)


def _render_now(invoice, locale: str) -> bytes:
    totals = _totals(invoice)  # once, not per line in the template (20 s for 2,000 lines)
    html = templates.render(
        "invoice.html", invoice=invoice, totals=totals, locale=locale,
        show_local_tax=invoice.customer_country == "CH" and invoice.currency != "CHF",
    )
    return pdf.from_html(html, fonts=pdf.subset_fonts(html))


def _totals(invoice) -> dict:
    by_rate: dict[str, int] = defaultdict(int)
    for line in invoice.lines:
        by_rate[str(line.tax_rate)] += line.tax_minor
    net = sum(line.net_minor for line in invoice.lines)
    return {"net": net, "tax_by_rate": dict(by_rate), "gross": net + sum(by_rate.values())}
''',
        cl=["tax-invoicing"],
    ),
    C(
        "globex", "BILLING", "billing/tax/vat.py", "globex/billing",
        "VAT rates per country from effective-dated rows (Swiss MWST 8.1% since 2024), reverse charge "
        "for validated business customers, and per-line rounding.",
        r'''
"""Effective-dated VAT rates. Never edit a row: add one with a new valid_from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal


@dataclass(frozen=True)
class Rate:
    country: str
    category: str
    percent: Decimal
    valid_from: date


RATES = (
    Rate("CH", "standard", Decimal("7.7"), date(2018, 1, 1)),
    Rate("CH", "standard", Decimal("8.1"), date(2024, 1, 1)),
    Rate("CH", "reduced", Decimal("2.6"), date(2024, 1, 1)),
    Rate("DE", "standard", Decimal("19"), date(2021, 1, 1)),
    Rate("FR", "standard", Decimal("20"), date(2014, 1, 1)),
)


def rate_for(country: str, category: str, on: date) -> Rate:
    candidates = [r for r in RATES if r.country == country and r.category == category and r.valid_from <= on]
    if not candidates:
        raise LookupError(f"no VAT rate for {country}/{category} on {on}")
    return max(candidates, key=lambda r: r.valid_from)  # the bug: CH used the first row, 7.7%


def tax_minor(net_minor: int, rate: Rate, *, reverse_charge: bool) -> int:
    if reverse_charge:
        return 0
    amount = Decimal(net_minor) * rate.percent / 100
    return int(amount.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
''',
        cl=["tax-invoicing"],
    ),
    C(
        "globex", "BILLING", "billing/proration.py", "globex/billing",
        "Proration of plan and quantity changes to the second, charging upgrades through the idempotent "
        "charge path and crediting downgrades on the next invoice.",
        r'''
"""Proration in integer minor units; one rounding per line."""

from __future__ import annotations

from datetime import datetime, timedelta

from billing import charge, credits, invoices

LAST_HOUR = timedelta(hours=1)


def prorated_minor(old_price_minor: int, new_price_minor: int, period_start: datetime,
                   period_end: datetime, changed_at: datetime) -> int:
    remaining = (period_end - changed_at).total_seconds()
    total = (period_end - period_start).total_seconds()
    delta = new_price_minor - old_price_minor
    return (delta * int(remaining) * 2 + int(total)) // (2 * int(total))  # round half up, integers only


def change_plan(subscription, new_plan, now: datetime):
    if subscription.period_end - now < LAST_HOUR:
        return subscription.schedule_change(new_plan, at=subscription.period_end)
    amount = prorated_minor(subscription.plan.price_minor, new_plan.price_minor,
                            subscription.period_start, subscription.period_end, now)
    subscription.switch_to(new_plan, at=now)
    if amount > 0:
        invoice = invoices.create_proration(subscription, amount)
        return charge.charge_attempt(invoice, attempt_number=1)  # a double click cannot charge twice
    if amount < 0:
        return credits.add(subscription.customer_id, -amount, reason="downgrade")
    return None
''',
        cl=["tax-invoicing", "billing-upkeep"], dep=["billing/charge.py"],
    ),
]  # fmt: skip


def S(  # noqa: N802 (a short constructor for the tables below)
    tenant: str,
    project: str,
    slug: str,
    kind: str,
    severity: str,
    title: str,
    summary: str,
    occurred_at: str,
    *,
    cl: tuple[str, ...] | list[str] = (),
) -> dict[str, Any]:
    """One signal: an incident, alert, deploy or piece of customer feedback."""
    return {
        "tenant": tenant, "project": project, "slug": slug, "kind": kind, "severity": severity, "title": title,
        "summary": summary, "occurredAt": occurred_at, "clusters": list(cl),
    }  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Signals. occurredAt is data (UTC, ISO 8601), not a clock reading.
# ----------------------------------------------------------------------------------------------
SIGNALS: list[dict[str, Any]] = [
    # acme AUTH
    S("acme", "AUTH", "token-refresh-outage-1", "incident", "sev1",
      "SEV1: users logged out, refresh tokens rejected",
      "Refresh tokens rejected as reused after a signing key rotation; 41,000 sessions revoked, web and "
      "mobile users logged out for 41 minutes.",
      "2026-03-14T09:12:00Z", cl=["token-refresh-outage"]),
    S("acme", "AUTH", "token-refresh-outage-2", "alert", "sev2",
      "Refresh token rejection rate above 5%",
      "auth_refresh_total non-ok ratio at 31% (threshold 5%), mostly result=reused.",
      "2026-03-14T09:31:00Z", cl=["token-refresh-outage"]),
    S("acme", "AUTH", "token-refresh-outage-3", "deploy", "info",
      "Deploy auth-service 4.12.0 with automated signing key rotation",
      "auth-service 4.12.0 rolled out to all zones; enables the key rotation job.",
      "2026-03-14T09:05:00Z", cl=["token-refresh-outage"]),
    S("acme", "AUTH", "token-refresh-outage-4", "feedback", "info",
      "Customers report being logged out every few minutes",
      "2,300 support tickets: users signed out on web and in the Android app, MFA prompts on every device.",
      "2026-03-14T09:17:00Z", cl=["token-refresh-outage"]),
    S("acme", "AUTH", "token-refresh-outage-5", "alert", "sev3",
      "Token endpoint p99 latency above 800 ms",
      "POST /oauth/token p99 at 1.9 s during the synchronised refresh waves after the outage.",
      "2026-03-14T10:30:00Z", cl=["token-refresh-outage"]),
    S("acme", "AUTH", "mfa-failed-second-factor", "alert", "sev3",
      "Spike in failed second-factor attempts",
      "Failed WebAuthn and TOTP verifications at 4x baseline, concentrated in one enterprise workspace "
      "enforcing MFA enrolment.",
      "2026-05-04T08:40:00Z", cl=["mfa-rollout"]),
    S("acme", "AUTH", "mfa-recovery-feedback", "feedback", "info",
      "Customers ask for MFA recovery without support tickets",
      "Survey and tickets: users who lost their phone want self-service recovery.",
      "2026-04-02T12:00:00Z", cl=["mfa-rollout"]),
    S("acme", "AUTH", "saml-cert-expiry", "alert", "sev2",
      "IdP signing certificate rotated: SAML logins failing for 3 enterprise customers",
      "SAML assertions rejected with invalid signature after the identity providers rotated certificates.",
      "2026-04-09T07:55:00Z", cl=["sso-oidc-migration"]),
    S("acme", "AUTH", "login-bruteforce", "alert", "sev2",
      "Credential stuffing attempt against /login",
      "180,000 login attempts from 9,000 IPs in 20 minutes; per-account limits and CAPTCHA engaged.",
      "2026-02-21T03:14:00Z", cl=["auth-hardening"]),
    # acme PAY
    S("acme", "PAY", "duplicate-charges-1", "incident", "sev2",
      "SEV2: customers charged twice after gateway timeouts",
      "Captures retried after card gateway read timeouts without idempotency keys; 412 orders charged "
      "twice, 37 three times.",
      "2026-03-03T14:02:00Z", cl=["duplicate-charges"]),
    S("acme", "PAY", "duplicate-charges-2", "alert", "sev3",
      "Duplicate capture detector fired",
      "More than one capture for the same order and amount within 30 minutes (first run as an alert).",
      "2026-03-18T11:20:00Z", cl=["duplicate-charges"]),
    S("acme", "PAY", "duplicate-charges-3", "feedback", "info",
      "Support: several customers report double charges",
      "230 tickets escalated to payments engineering about duplicate card charges.",
      "2026-03-03T14:52:00Z", cl=["duplicate-charges"]),
    S("acme", "PAY", "duplicate-charges-4", "deploy", "info",
      "Deploy payments 3.8.1 with idempotent capture retries",
      "Enables payments.capture_idempotency for 5% of merchants.",
      "2026-03-20T10:00:00Z", cl=["duplicate-charges"]),
    S("acme", "PAY", "gateway-timeouts", "alert", "sev2",
      "Card gateway timeout rate above 3%",
      "Read timeouts on captures at 11%; gateway client connection pool saturated.",
      "2026-03-03T14:05:00Z", cl=["duplicate-charges", "checkout-latency"]),
    S("acme", "PAY", "checkout-latency-1", "alert", "sev2",
      "Checkout p95 latency above 2 s",
      "Checkout p95 at 2.1 s (target 1 s); fraud span 700 ms, currency conversion 120 ms.",
      "2026-05-11T09:00:00Z", cl=["checkout-latency"]),
    S("acme", "PAY", "checkout-latency-2", "deploy", "info",
      "Deploy checkout 2.7 with inline fraud scoring",
      "checkout 2.7 calls the fraud scoring vendor synchronously before authorisation.",
      "2026-05-10T16:30:00Z", cl=["checkout-latency"]),
    S("acme", "PAY", "cafe-discount-feedback", "feedback", "info",
      "Café owners: loyalty discount applied twice",
      "Three café merchants report drinks sold at a quarter of their price with loyalty cards.",
      "2026-05-19T15:00:00Z", cl=["checkout-latency"]),
    S("acme", "PAY", "reconciliation-mismatch", "alert", "sev3",
      "Reconciliation found 12 unbalanced ledger transactions",
      "Captures written without their balancing entries; found while refunding the duplicate charges.",
      "2026-03-05T02:40:00Z", cl=["duplicate-charges"]),
    S("acme", "PAY", "edge-proxy-tls", "alert", "sev3",
      "Edge proxy TLS certificate expiring in 7 days",
      "The shared edge proxy certificate for api.acme.example (checkout, login and token endpoints) "
      "expires in 7 days; automatic renewal failed.",
      "2026-08-01T06:00:00Z"),
    # acme SEARCH
    S("acme", "SEARCH", "index-lag-1", "incident", "sev3",
      "SEV3: search results stale for 6 hours after bulk import",
      "Indexing consumer six hours behind after a 2.3 million product import; stale prices and stock.",
      "2026-04-22T10:40:00Z", cl=["index-lag"]),
    S("acme", "SEARCH", "index-lag-2", "alert", "sev3",
      "Indexing consumer lag above 30 minutes",
      "Oldest unprocessed catalogue event is 31 minutes old on catalogue.live.",
      "2026-05-14T13:05:00Z", cl=["index-lag"]),
    S("acme", "SEARCH", "search-zero-results", "alert", "sev4",
      "Search zero-result rate above 8%",
      "Zero-result searches at 8.4% (baseline 5%), many for furniture synonyms.",
      "2026-02-20T09:00:00Z", cl=["relevance-tuning"]),
    S("acme", "SEARCH", "search-sofa-feedback", "feedback", "info",
      "Users cannot find couches when searching sofa",
      "Customer feedback: 'sofa' returns nothing in the living room category, 'couch' does.",
      "2026-02-18T14:00:00Z", cl=["relevance-tuning"]),
    S("acme", "SEARCH", "ltr-model-deploy", "deploy", "info",
      "Deploy ranking model ltr-2026-04",
      "First gradient-boosted ranking model; +4.1 NDCG@10 offline.",
      "2026-04-28T08:00:00Z", cl=["relevance-tuning"]),
    S("acme", "SEARCH", "search-accent-feedback", "feedback", "info",
      "French customers: accented queries return nothing",
      "Searches for 'crème brûlée' and 'pâte' return no results; without accents they work.",
      "2026-05-02T10:00:00Z", cl=["relevance-tuning"]),
    # globex CORE
    S("globex", "CORE", "session-expiry-1", "incident", "sev2",
      "SEV2: mobile users logged out every hour",
      "Session tokens rejected as expired on api-7 (clock 94 s fast); the mobile app has no token refresh.",
      "2026-06-02T08:20:00Z", cl=["session-token-expiry"]),
    S("globex", "CORE", "session-expiry-2", "alert", "sev3",
      "Clock drift detected on api-7",
      "NTP offset 94 s on api-7; chrony has no selected source.",
      "2026-06-02T09:05:00Z", cl=["session-token-expiry"]),
    S("globex", "CORE", "session-expiry-3", "feedback", "info",
      "App store reviews: 'keeps logging me out'",
      "380 reviews in one week mention being logged out of the mobile app.",
      "2026-06-01T18:00:00Z", cl=["session-token-expiry"]),
    S("globex", "CORE", "retry-storm-1", "incident", "sev1",
      "SEV1: API gateway overloaded by internal retry storm",
      "Gateway restart, then internal clients retried without budget or jitter; traffic x8 for 55 minutes.",
      "2026-07-09T14:01:00Z", cl=["retry-storm"]),
    S("globex", "CORE", "retry-storm-2", "alert", "sev2",
      "Gateway 503 rate above 20%",
      "503 responses at 64% of gateway traffic.",
      "2026-07-09T14:02:00Z", cl=["retry-storm"]),
    S("globex", "CORE", "retry-storm-3", "deploy", "info",
      "Deploy gateway 1.19 with per-tenant rate limits",
      "Token bucket limits per tenant, route class and internal client; 429 with Retry-After.",
      "2026-07-21T09:00:00Z", cl=["retry-storm"]),
    S("globex", "CORE", "go-upgrade-deploy", "deploy", "info",
      "Deploy all CORE services built with Go 1.26",
      "Rolling deploy of every CORE service with the new toolchain; gateway p99 down 6%.",
      "2026-08-04T09:00:00Z", cl=["core-platform"]),
    S("globex", "CORE", "db-failover", "alert", "sev2",
      "Primary Postgres failover in eu-west",
      "Primary failed over; API nodes and billing workers exhausted max_connections while reconnecting.",
      "2026-07-15T02:10:00Z", cl=["core-platform"]),
    # globex BILLING
    S("globex", "BILLING", "invoice-retries-1", "alert", "sev3",
      "Invoice retry queue backlog above 10k",
      "14,000 retry jobs queued, oldest 3 hours; workers blocked on slow provider responses.",
      "2026-07-08T06:00:00Z", cl=["invoice-retries"]),
    S("globex", "BILLING", "invoice-retries-2", "feedback", "info",
      "Customers confused by duplicate dunning emails",
      "Customer success: customers got the same payment reminder two or three times.",
      "2026-07-10T12:00:00Z", cl=["invoice-retries"]),
    S("globex", "BILLING", "invoice-retries-3", "incident", "sev2",
      "SEV2: renewals failing after payment provider token expiry",
      "3,100 renewals declined with token_expired within an hour and sent straight to dunning.",
      "2026-07-15T00:10:00Z", cl=["invoice-retries"]),
    S("globex", "BILLING", "invoice-retries-4", "alert", "sev3",
      "Double charge guard blocked 37 retries",
      "Invoices already charged in the last 24 hours were about to be charged again.",
      "2026-07-08T07:30:00Z", cl=["invoice-retries"]),
    S("globex", "BILLING", "vat-zurich-feedback", "feedback", "info",
      "Zürich customers: invoice shows 7.7% VAT instead of 8.1%",
      "Finance confirmed 1,140 Swiss invoices with the outdated rate since January.",
      "2026-07-02T09:00:00Z", cl=["tax-invoicing"]),
    S("globex", "BILLING", "invoice-render-slow", "alert", "sev4",
      "Invoice rendering p95 above 10 s",
      "Large usage invoices take up to 20 s to render and time out in the billing portal.",
      "2026-06-12T10:00:00Z", cl=["tax-invoicing"]),
    S("globex", "BILLING", "billing-deploy", "deploy", "info",
      "Deploy billing 5.2 with payday-aware retries",
      "New retry scheduler enabled for all customers after a two-week test on 10%.",
      "2026-07-28T09:00:00Z", cl=["invoice-retries"]),
]  # fmt: skip

# ----------------------------------------------------------------------------------------------
# Pools for the generated parts of work item descriptions, per project (picked with the seeded RNG).
# ----------------------------------------------------------------------------------------------
ACCEPTANCE: dict[str, list[str]] = {
    "AUTH": [
        "Covered by integration tests against the staging identity provider",
        "Audit events written for every state change",
        "Metrics on the auth dashboard and an alert with a runbook link",
        "Security has reviewed the change",
        "Behind a per-workspace flag, enabled for the internal workspace first",
        "No secret, token or cookie value appears in logs (redaction test)",
        "Documented in the auth service architecture page",
        "Mobile SDK and web session manager behave the same way",
    ],
    "PAY": [
        "Chaos test in staging with gateway timeouts shows no duplicate capture",
        "Ledger stays balanced for every affected transaction",
        "Behind a per-merchant flag with a documented rollback",
        "Reconciliation shows no new mismatch for two consecutive nights",
        "Checkout p95 latency does not regress (dashboard screenshot in the PR)",
        "Runbook updated and linked from the alert",
        "Finance has signed off on the reporting impact",
        "No card data in logs (masking test passes)",
    ],
    "SEARCH": [
        "NDCG@10 on the judged set does not drop in any frequency band",
        "Zero-result rate measured before and after",
        "Search latency p95 stays under 250 ms",
        "A/B test plan written before rollout",
        "Works for every storefront locale (de, fr, en, it)",
        "Reindex plan reviewed if the analyzer or mapping changes",
    ],
    "CORE": [
        "Canary on one region for 24 hours before global rollout",
        "Dashboards and alerts updated; runbook linked from the alert",
        "Follows the CORE service standards (deadlines, retries, shutdown)",
        "Load test result attached to the PR",
        "Backwards compatible with the previous mobile app release",
        "Behind a feature flag in the flags service",
    ],
    "BILLING": [
        "No invoice can be charged twice (integration test with two workers)",
        "Finance has reviewed the change to invoices or tax amounts",
        "Customer-facing texts translated for every supported locale",
        "Billing dashboard shows the new metrics",
        "Runbook updated for the on-call",
        "Replayed against last month's invoices with identical totals",
    ],
}
NOTES: dict[str, list[str]] = {
    "AUTH": [
        "Pair with security on the review; identity on-call must know about the rollout.",
        "Rollout order: internal workspace, then 5% of workspaces, then everyone.",
        "Check with the mobile team whether an SDK release is needed.",
    ],
    "PAY": [
        "Do not roll out during the month-end settlement window.",
        "Ping finance before changing anything that shows up in settlement reports.",
        "Merchants with custom gateway contracts go last.",
    ],
    "SEARCH": [
        "Check the merchandising calendar before anything that needs a reindex.",
        "Share offline numbers in #search-relevance before opening the PR.",
    ],
    "CORE": [
        "Announce in #platform-changes one day before the rollout.",
        "Coordinate with billing; they share the database cluster.",
    ],
    "BILLING": [
        "Avoid deploying on the 1st of the month (renewal peak).",
        "Customer success wants a heads-up before anything customer-visible ships.",
    ],
}

EDGE_RULES: dict[str, set[tuple[str, str]]] = {
    "HAS_SIGNAL": {("cdm.work_item", "signal.instance"), ("code.file", "signal.instance")},
    "IN_CLUSTER": {
        ("cdm.work_item", "kg.cluster"), ("cdm.doc", "kg.cluster"), ("code.file", "kg.cluster"),
        ("signal.instance", "kg.cluster"),
    },
    "REFERENCES": {("cdm.work_item", "cdm.doc"), ("cdm.doc", "cdm.doc")},
    "IMPLEMENTED_BY": {("cdm.work_item", "code.file")},
    "DEPENDS_ON": {("cdm.work_item", "cdm.work_item"), ("code.file", "code.file")},
    "DOCUMENTS": {("cdm.doc", "code.file")},
    "ASSIGNED_TO": {("cdm.work_item", "cdm.person")},
}  # fmt: skip


def node(
    tenant: str,
    node_id: str,
    node_type: str,
    project: str | None,
    title: str | None,
    url: str | None,
    text: dict[str, str],
    properties: dict[str, Any],
    acl: list[str] | None = None,
    *,
    tags: list[str] | None = None,
    updated_at: str | None = None,
) -> dict[str, Any]:
    """A node in the file's key order; a non-empty acl makes it secured; tags and the update time only
    when given."""
    facets: dict[str, Any] = {"tags": tags} if tags else {}
    if updated_at is not None:
        facets["updatedAt"] = updated_at
    return {
        "tenantId": tenant,
        "id": node_id,
        "nodeType": node_type,
        "projectKey": project,
        "title": title,
        "url": url,
        "secured": bool(acl),
        "acl": sorted(acl or []),
        "text": text,
        "properties": properties,
        **facets,
    }


def bullets(items: list[str], box: bool = False) -> str:
    mark = "- [ ] " if box else "- "
    return "\n".join(mark + item for item in items)


def describe(item: dict[str, Any], project: str, cluster: tuple[str, str, list[str]], rng: random.Random) -> str:
    """The description: the hand-written detail plus context, acceptance criteria and a note, in one
    of three layouts teams actually use."""
    title, context = cluster[0], rng.choice(cluster[2])
    done = item["done"] or rng.sample(ACCEPTANCE[project], 3)
    note = rng.choice(NOTES[project])
    layout = rng.randrange(3)
    if layout == 0:
        return f"{item['detail']}\n\n**Context.** {context}\n\n**Acceptance criteria**\n{bullets(done)}"
    if layout == 1:
        return (
            f"### Problem\n\n{item['detail']}\n\n### Why now\n\n{context}\n\n### Done when\n\n{bullets(done)}"
            f"\n\n_Note: {note}_"
        )
    return f"{item['detail']}\n\nPart of “{title}”. {context}\n\nChecklist:\n{bullets(done, box=True)}\n\n{note}"


def doc_body(doc: dict[str, Any]) -> str:
    if not doc["body"]:
        return ""
    footer = f"Owner: {doc['owner']} team."
    if doc["reviewed"]:
        footer += f" Last reviewed: {doc['reviewed']}."
    if doc["acl"]:
        footer += " Access: " + ", ".join(sorted(doc["acl"])) + "."
    return f"{doc['body']}\n\n---\n{footer}"


def build() -> dict[str, Any]:
    """The whole dataset, in the file's order."""
    rng = random.Random(SEED)
    nodes: list[dict[str, Any]] = []
    edges: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    index: dict[tuple[str, str, str], str] = {}  # (tenant, kind, local key) -> node id

    def register(tenant: str, kind: str, key: str, node_id: str) -> None:
        if (tenant, kind, key) in index:
            raise ValueError(f"duplicate {kind} {key!r} in {tenant}")
        index[(tenant, kind, key)] = node_id

    def ref(tenant: str, kind: str, key: str) -> str:
        try:
            return index[(tenant, kind, key)]
        except KeyError:
            raise KeyError(f"unknown {kind} {key!r} in tenant {tenant}") from None

    def link(tenant: str, edge_type: str, source: str, target: str) -> None:
        key = (tenant, edge_type, source, target)
        if key in edges:
            raise ValueError(f"duplicate edge {key}")
        edges[key] = {"tenantId": tenant, "edgeType": edge_type, "fromNodeId": source, "toNodeId": target,
                      "properties": {}}  # fmt: skip

    for tenant, people in PEOPLE.items():
        for handle, name, team in people:
            register(tenant, "person", handle, f"{tenant}:person:{handle}")
            nodes.append(
                node(tenant, f"{tenant}:person:{handle}", "cdm.person", None, name, None, {},
                     {"email": f"{handle}@{tenant}.example", "team": team})
            )  # fmt: skip
    clusters: dict[tuple[str, str], tuple[str, str, list[str]]] = {}
    for tenant, project, slug, kind, title, summary, period, contexts in CLUSTERS:
        register(tenant, "cluster", slug, f"{tenant}:cluster:{slug}")
        clusters[(tenant, slug)] = (title, summary, contexts)
        nodes.append(
            node(tenant, f"{tenant}:cluster:{slug}", "kg.cluster", project, title, None, {"summary": summary},
                 {"clusterKind": kind, "period": period})
        )  # fmt: skip
    for doc in DOCS:
        register(doc["tenant"], "doc", doc["slug"], doc["id"])
        body = doc_body(doc)
        nodes.append(
            node(doc["tenant"], doc["id"], "cdm.doc", doc["project"], doc["title"],
                 f"{WIKI[doc['tenant']]}/{doc['slug']}" if body else None, {"body": body} if body else {},
                 {"docKind": doc["kind"], "owner": doc["owner"]}, doc["acl"],
                 updated_at=f"{doc['reviewed']}-01" if doc["reviewed"] else None)
        )  # fmt: skip
    for code in CODE:
        code_id = f"{code['tenant']}:code:{code['path']}"
        register(code["tenant"], "code", code["path"], code_id)
        nodes.append(
            node(code["tenant"], code_id, "code.file", code["project"], code["path"],
                 f"{REPOS[code['repo']]}/{code['path']}", {"summary": code["summary"], "body": code["body"]},
                 {"language": code["language"], "repo": code["repo"], "path": code["path"]})
        )  # fmt: skip
    for signal in SIGNALS:
        tenant = signal["tenant"]
        signal_id = f"{tenant}:signal:{signal['slug']}"
        register(tenant, "signal", signal["slug"], signal_id)
        url = f"{INCIDENTS[tenant]}/{signal['slug']}" if signal["kind"] == "incident" else None
        nodes.append(
            node(tenant, signal_id, "signal.instance", signal["project"], signal["title"], url,
                 {"summary": signal["summary"]},
                 {"signalKind": signal["kind"], "severity": signal["severity"], "occurredAt": signal["occurredAt"]})
        )  # fmt: skip
    for item in WORK:
        project = item["key"].split("-")[0]
        tenant = PROJECT_TENANT[project]
        register(tenant, "work", item["key"], f"{tenant}:work:{item['key']}")
    for item in WORK:
        project = item["key"].split("-")[0]
        tenant = PROJECT_TENANT[project]
        work_id = ref(tenant, "work", item["key"])
        ref(tenant, "person", item["assignee"])
        cluster = clusters[(tenant, item["clusters"][0])]
        text = {"summary": item["summary"], "description": describe(item, project, cluster, rng)}
        nodes.append(
            node(tenant, work_id, "cdm.work_item", project, item["title"], f"{TRACKER[tenant]}/{item['key']}", text,
                 {"status": item["status"], "priority": item["priority"], "assignee": item["assignee"],
                  "labels": item["labels"]}, tags=item["labels"])
        )  # fmt: skip
        for slug in item["clusters"]:
            link(tenant, "IN_CLUSTER", work_id, ref(tenant, "cluster", slug))
        link(tenant, "ASSIGNED_TO", work_id, ref(tenant, "person", item["assignee"]))
        for slug in item["docs"]:
            link(tenant, "REFERENCES", work_id, ref(tenant, "doc", slug))
        for path in item["code"]:
            link(tenant, "IMPLEMENTED_BY", work_id, ref(tenant, "code", path))
        for slug in item["signals"]:
            link(tenant, "HAS_SIGNAL", work_id, ref(tenant, "signal", slug))
        for key in item["depends"]:
            link(tenant, "DEPENDS_ON", work_id, ref(tenant, "work", key))
    for doc in DOCS:
        tenant = doc["tenant"]
        for slug in doc["clusters"]:
            link(tenant, "IN_CLUSTER", doc["id"], ref(tenant, "cluster", slug))
        for slug in doc["refs"]:
            link(tenant, "REFERENCES", doc["id"], ref(tenant, "doc", slug))
        for path in doc["documents"]:
            link(tenant, "DOCUMENTS", doc["id"], ref(tenant, "code", path))
    for code in CODE:
        tenant, code_id = code["tenant"], ref(code["tenant"], "code", code["path"])
        for slug in code["clusters"]:
            link(tenant, "IN_CLUSTER", code_id, ref(tenant, "cluster", slug))
        for path in code["depends"]:
            link(tenant, "DEPENDS_ON", code_id, ref(tenant, "code", path))
        for slug in code["signals"]:
            link(tenant, "HAS_SIGNAL", code_id, ref(tenant, "signal", slug))
    for signal in SIGNALS:
        tenant = signal["tenant"]
        for slug in signal["clusters"]:
            link(tenant, "IN_CLUSTER", ref(tenant, "signal", signal["slug"]), ref(tenant, "cluster", slug))

    nodes.sort(key=lambda n: (n["tenantId"], n["id"]))
    dataset = {
        "formatVersion": 1,
        "description": DESCRIPTION,
        "nodes": nodes,
        "edges": [edges[key] for key in sorted(edges)],
    }
    check(dataset)
    return dataset


def check(dataset: dict[str, Any]) -> None:
    """Invariants the tests and the README rely on; raises ValueError on the first violation."""
    types: dict[tuple[str, str], str] = {}
    for n in dataset["nodes"]:
        key = (n["tenantId"], n["id"])
        if key in types:
            raise ValueError(f"duplicate node {key}")
        types[key] = n["nodeType"]
        if n["secured"] != bool(n["acl"]):
            raise ValueError(f"{key}: secured must be true exactly when acl is non-empty")
        if n["projectKey"] is None and n["nodeType"] != "cdm.person":
            raise ValueError(f"{key}: only people may lack a project")
    for e in dataset["edges"]:
        ends = (types.get((e["tenantId"], e["fromNodeId"])), types.get((e["tenantId"], e["toNodeId"])))
        if None in ends:
            raise ValueError(f"edge {e} has an endpoint outside tenant {e['tenantId']}")
        if ends not in EDGE_RULES[e["edgeType"]]:
            raise ValueError(f"edge {e['edgeType']} may not link {ends[0]} -> {ends[1]}")
    pii = {value for people in PEOPLE.values() for _, name, _ in people for value in (name,)}
    pii |= {f"{handle}@{tenant}.example" for tenant, people in PEOPLE.items() for handle, _, _ in people}
    for n in dataset["nodes"]:
        if n["nodeType"] == "cdm.person":
            continue
        blob = json.dumps([n["title"], n["text"], n["properties"]], ensure_ascii=False)
        leaked = sorted(value for value in pii if value in blob)
        if leaked:
            raise ValueError(f"{n['id']}: personal data outside person nodes: {leaked}")


def render() -> str:
    """The file's exact text."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
