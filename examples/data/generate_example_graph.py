"""Writes example_graph.json: a realistic two-tenant knowledge graph (deterministic, stdlib only).

Run: python examples/data/generate_example_graph.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("example_graph.json")
RNG = random.Random(20261122)

# ----------------------------------------------------------------------------------------------
# Topics: each becomes an episode cluster with work items, docs, code, signals.
# (tenant, project, slug, episode title, summary, work items, docs, code files, signals)
# ----------------------------------------------------------------------------------------------
TOPICS: list[dict[str, Any]] = [
    {
        "tenant": "acme",
        "project": "AUTH",
        "slug": "token-refresh-outage",
        "title": "OAuth token refresh outage",
        "summary": "Refresh tokens were rejected after a key rotation; sessions expired for 40 minutes.",
        "work": [
            (
                "Fix race condition in token refresh",
                "Two concurrent refresh calls invalidate each other's refresh token.",
            ),
            (
                "Add jitter to token refresh scheduling",
                "Clients refresh exactly at expiry and stampede the auth service.",
            ),
            (
                "Rotate signing keys without invalidating refresh tokens",
                "Key rotation must keep the previous key valid for verification.",
            ),
            (
                "Alert on refresh token rejection rate",
                "Page on-call when refresh rejections exceed 2% for five minutes.",
            ),
            (
                "Backfill sessions lost during the token outage",
                "Users logged out during the outage need their carts restored.",
            ),
        ],
        "docs": [
            ("Token refresh design", "design", False, []),
            ("Postmortem: OAuth token refresh outage", "postmortem", True, ["group:security", "user:alice"]),
            ("Runbook: auth service key rotation", "runbook", False, []),
        ],
        "code": [
            ("services/auth/token_refresh.py", "Refreshes OAuth access tokens and rotates refresh tokens."),
            ("services/auth/keys.py", "Loads signing keys and keeps the previous key for verification."),
        ],
        "signals": [
            ("incident", "sev1", "SEV1: users logged out, refresh tokens rejected", "2026-03-14"),
            ("alert", "sev2", "Refresh token rejection rate above 5%", "2026-03-14"),
            ("deploy", "info", "Deploy auth-service 4.12.0 with key rotation", "2026-03-14"),
        ],
    },
    {
        "tenant": "acme",
        "project": "AUTH",
        "slug": "mfa-rollout",
        "title": "Multi-factor authentication rollout",
        "summary": "Rolling out TOTP and WebAuthn second factors to all workspace users.",
        "work": [
            ("Support WebAuthn security keys", "Register and verify FIDO2 security keys as a second factor."),
            ("Enforce MFA for workspace admins", "Admins must enrol a second factor before changing billing or roles."),
            ("Recovery codes for MFA", "Generate single-use recovery codes and show them once at enrolment."),
            (
                "Login handler: user authentication with second factor",
                "The login handler asks for the second factor after the password check.",
            ),
        ],
        "docs": [
            ("MFA enrolment guide", "guide", False, []),
            ("ADR 014: WebAuthn over SMS codes", "adr", False, []),
            ("Threat model: account takeover", "design", True, ["group:security"]),
        ],
        "code": [
            ("services/auth/login_handler.py", "Handles user login: password check, then the second factor."),
            ("services/auth/webauthn.py", "Registers and verifies WebAuthn credentials."),
        ],
        "signals": [
            ("feedback", "info", "Customers ask for MFA recovery without support tickets", "2026-04-02"),
            ("alert", "sev3", "Spike in failed second-factor attempts", "2026-04-20"),
        ],
    },
    {
        "tenant": "acme",
        "project": "PAY",
        "slug": "duplicate-charges",
        "title": "Duplicate card charges",
        "summary": "Retries after gateway timeouts charged some cards twice; fixed with idempotency keys.",
        "work": [
            (
                "Retry failed card captures with idempotency keys",
                "Every capture request carries an idempotency key derived from the order.",
            ),
            ("Refund duplicate charges from March 3", "Identify and refund 412 duplicate captures."),
            ("Gateway timeout handling in payment client", "Treat a timeout as unknown and reconcile before retrying."),
            ("Reconciliation job for card captures", "Nightly job compares gateway settlements with our ledger."),
            ("Idempotency key storage with TTL", "Keep idempotency keys for 24 hours in the payments database."),
        ],
        "docs": [
            ("Payments retry and idempotency design", "design", False, []),
            ("Runbook: refunding duplicate charges", "runbook", False, []),
            ("Postmortem: duplicate card charges", "postmortem", True, ["group:payments-leads"]),
        ],
        "code": [
            ("services/payments/capture.py", "Captures authorised card payments with idempotency keys."),
            ("services/payments/gateway_client.py", "HTTP client for the card gateway with timeouts and retries."),
            ("jobs/reconcile_captures.py", "Reconciles gateway settlements with ledger entries."),
        ],
        "signals": [
            ("incident", "sev2", "SEV2: customers charged twice after gateway timeouts", "2026-03-03"),
            ("alert", "sev3", "Duplicate capture detector fired", "2026-03-03"),
            ("feedback", "info", "Support: several customers report double charges", "2026-03-04"),
        ],
    },
    {
        "tenant": "acme",
        "project": "PAY",
        "slug": "checkout-latency",
        "title": "Checkout latency regression",
        "summary": "Checkout p95 latency doubled after adding fraud scoring to the payment path.",
        "work": [
            (
                "Move fraud scoring off the checkout critical path",
                "Score asynchronously and hold fulfilment instead of the request.",
            ),
            ("Cache currency conversion rates", "Conversion rates are fetched on every checkout call."),
            ("Café checkout — ½ price bug", "Discount applied twice for café orders with a loyalty card."),
            ("Checkout latency dashboard", "Break down checkout latency by dependency."),
        ],
        "docs": [
            ("Checkout architecture overview", "design", False, []),
            ("Runbook: checkout latency", "runbook", False, []),
        ],
        "code": [
            ("services/checkout/handler.py", "Checkout request handler: cart, pricing, payment."),
            ("services/checkout/pricing.py", "Applies discounts and loyalty rules to carts."),
        ],
        "signals": [
            ("alert", "sev2", "Checkout p95 latency above 2s", "2026-05-11"),
            ("deploy", "info", "Deploy checkout 2.7 with inline fraud scoring", "2026-05-10"),
        ],
    },
    {
        "tenant": "acme",
        "project": "SEARCH",
        "slug": "relevance-tuning",
        "title": "Search relevance tuning",
        "summary": "Improving product search ranking with synonyms, typo tolerance and click feedback.",
        "work": [
            ("Add synonym dictionary to product search", "Map common synonyms such as sofa and couch."),
            ("Typo tolerance for short queries", "Allow one edit for queries of five characters or more."),
            ("Learning to rank from click feedback", "Train a ranking model from anonymised clicks."),
            ("Search relevance offline evaluation set", "Build a judged query set to measure NDCG."),
            ("Boost in-stock products in search ranking", "Out-of-stock products should rank lower."),
        ],
        "docs": [
            ("Search ranking design", "design", False, []),
            ("Relevance evaluation guide", "guide", False, []),
        ],
        "code": [
            ("services/search/ranking.py", "Scores and ranks product search results."),
            ("services/search/synonyms.py", "Expands queries with the synonym dictionary."),
        ],
        "signals": [
            ("feedback", "info", "Users cannot find couches when searching sofa", "2026-02-18"),
            ("alert", "sev4", "Search zero-result rate above 8%", "2026-02-20"),
        ],
    },
    {
        "tenant": "globex",
        "project": "CORE",
        "slug": "session-token-expiry",
        "title": "Session token expiry bug",
        "summary": "Session tokens expired early because of clock skew between API nodes.",
        "work": [
            (
                "Tolerate clock skew when validating session tokens",
                "Allow 60 seconds of leeway when checking token expiry.",
            ),
            (
                "Token refresh endpoint for the mobile app",
                "Mobile clients need a refresh endpoint instead of re-login.",
            ),
            ("NTP monitoring on API nodes", "Alert when a node's clock drifts by more than one second."),
            ("User authentication service extraction", "Move user authentication out of the monolith."),
        ],
        "docs": [
            ("Session and token lifecycle", "design", False, []),
            ("Incident review: early session expiry", "postmortem", True, ["group:globex-sre"]),
        ],
        "code": [
            ("core/auth/session_tokens.go", "Issues and validates session tokens."),
            ("core/auth/refresh.go", "Token refresh endpoint for mobile clients."),
        ],
        "signals": [
            ("incident", "sev2", "SEV2: mobile users logged out every hour", "2026-06-02"),
            ("alert", "sev3", "Clock drift detected on api-7", "2026-06-02"),
        ],
    },
    {
        "tenant": "globex",
        "project": "BILLING",
        "slug": "invoice-retries",
        "title": "Invoice payment retries",
        "summary": "Failed invoice payments are retried on a schedule; dunning emails follow.",
        "work": [
            (
                "Smart retry schedule for failed invoice payments",
                "Retry on the customer's usual payday instead of fixed intervals.",
            ),
            ("Dunning email templates", "Three reminder emails before suspending an account."),
            ("Billing retry idempotency", "Retries must not create a second charge for the same invoice."),
            ("Invoice PDF rendering is slow", "Rendering large invoices takes 20 seconds."),
        ],
        "docs": [
            ("Billing retries and dunning", "design", False, []),
            ("Runbook: stuck invoice retries", "runbook", False, []),
        ],
        "code": [
            ("billing/retry_scheduler.py", "Schedules retries of failed invoice payments."),
            ("billing/invoices/render.py", "Renders invoices to PDF."),
        ],
        "signals": [
            ("alert", "sev3", "Invoice retry queue backlog above 10k", "2026-07-08"),
            ("feedback", "info", "Customers confused by duplicate dunning emails", "2026-07-10"),
        ],
    },
]

PEOPLE = {
    "acme": [
        ("alice", "Alice Moreau", "security"),
        ("bob", "Bob Tanaka", "payments"),
        ("chen", "Chen Wei", "search"),
        ("dana", "Dana Okafor", "identity"),
        ("erik", "Erik Lund", "payments"),
        ("fatima", "Fatima Zahra", "sre"),
    ],
    "globex": [
        ("gus", "Gus Ferreira", "core"),
        ("hana", "Hana Novak", "billing"),
        ("ivan", "Ivan Petrov", "sre"),
        ("jo", "Jo Kim", "core"),
    ],
}

FILLER_WORK: dict[str, list[str]] = {
    "AUTH": [
        "Password reset emails land in spam",
        "Audit log for role changes",
        "SCIM user provisioning",
        "Session list in account settings",
        "Rate limit login attempts per IP",
        "SAML metadata refresh",
        "Remove legacy API keys",
        "Device trust for admin console",
        "Session timeout settings per workspace",
        "OAuth consent screen branding",
        "Login page accessibility fixes",
        "Service accounts for CI",
    ],
    "PAY": [
        "Support Apple Pay in checkout",
        "Payout reports in CSV",
        "Chargeback evidence upload",
        "Tax calculation for EU VAT",
        "Saved cards for returning customers",
        "3-D Secure challenge flow",
        "Refund status webhooks",
        "Ledger double-entry validation",
        "Invoice numbering per country",
        "Payment method expiry reminders",
        "Fraud rules editor",
        "Settlement report reconciliation",
    ],
    "SEARCH": [
        "Autocomplete for product names",
        "Faceted filters for size and colour",
        "Search analytics export",
        "Index rebuild without downtime",
        "Query spelling suggestions",
        "Category pages from search",
        "Search result snippets with highlights",
        "Personalised ranking experiment",
        "Search latency budget",
    ],
    "CORE": [
        "Upgrade Go to 1.26",
        "Structured logging across services",
        "Feature flags service",
        "Graceful shutdown for API nodes",
        "Rate limiting middleware",
        "Health checks for dependencies",
        "Database connection pool tuning",
        "Retry budget for internal calls",
        "Secrets rotation automation",
    ],
    "BILLING": [
        "Proration on plan changes",
        "Usage-based billing meters",
        "Credit notes for refunds",
        "Multi-currency invoices",
        "Billing portal for customers",
        "Tax IDs on invoices",
        "Annual plan discounts",
        "Failed payment analytics",
        "Billing emails localisation",
    ],
}
STATUSES = ["open", "in_progress", "in_review", "done"]
PRIORITIES = ["low", "medium", "high", "urgent"]
TRACKER = {"acme": "https://tracker.acme.example/browse", "globex": "https://jira.globex.example/browse"}
WIKI = {"acme": "https://wiki.acme.example/pages", "globex": "https://docs.globex.example/wiki"}
REPO = {
    "acme": "https://git.acme.example/acme/platform/blob/main",
    "globex": "https://git.globex.example/globex/core/-/blob/main",
}


def slugify(text: str) -> str:
    return "-".join("".join(c.lower() if c.isalnum() else " " for c in text).split())[:60]


def paragraphs(topic: dict[str, Any], title: str, kind: str, count: int) -> str:
    """Plausible body text for a doc, varied by section."""
    sections = {
        "design": ["Context", "Goals", "Non-goals", "Proposal", "Alternatives considered", "Rollout", "Open questions"],
        "runbook": ["When to use this runbook", "Symptoms", "Diagnosis", "Mitigation", "Escalation", "Verification"],
        "postmortem": ["Summary", "Impact", "Timeline", "Root cause", "What went well", "Action items"],
        "adr": ["Status", "Context", "Decision", "Consequences"],
        "guide": ["Overview", "Before you start", "Steps", "Troubleshooting", "FAQ"],
    }[kind]
    items = [w[0].lower() for w in topic["work"]]
    out: list[str] = []
    for index, section in enumerate(sections[:count]):
        focus = items[index % len(items)]
        other = items[(index + 2) % len(items)]
        out += [
            f"## {section}",
            "",
            f"{topic['summary']} This section covers {focus} and how it relates to {other}. "
            f"The {topic['title'].lower()} work touches the {topic['project']} services owned by the team, "
            f"and every change is reviewed against the {kind} checklist before it ships.",
            "",
            f"We measured the effect of {focus} in staging for two weeks. The numbers were stable, and the "
            f"remaining risk is that {other} interacts with older clients that do not follow the new contract. "
            f"Mitigation: feature flags per tenant, a dashboard, and a rollback plan rehearsed in a game day.",
            "",
        ]
    return "\n".join(out).strip()


def code_body(path: str, summary: str) -> str:
    stem = path.rsplit("/", 1)[-1].split(".")[0]
    if path.endswith(".go"):
        return "\n".join(
            [
                "package auth",
                "",
                "import (",
                '\t"errors"',
                '\t"time"',
                ")",
                "",
                f"// {summary}",
                f"func {stem.title().replace('_', '')}(now time.Time, expiresAt time.Time, "
                "leeway time.Duration) error {",
                "\tif now.After(expiresAt.Add(leeway)) {",
                '\t\treturn errors.New("token expired")',
                "\t}",
                "\treturn nil",
                "}",
            ]
        )
    return "\n".join(
        [
            f'"""{summary}"""',
            "",
            "from __future__ import annotations",
            "",
            "import logging",
            "",
            "logger = logging.getLogger(__name__)",
            "",
            "",
            f"def {stem}(request, *, retries: int = 3, timeout_s: float = 2.0):",
            f'    """{summary}"""',
            "    for attempt in range(retries):",
            "        try:",
            "            return request.send(timeout=timeout_s)",
            "        except TimeoutError:",
            '            logger.warning("attempt %d timed out", attempt)',
            '    raise RuntimeError("gave up after retries")',
        ]
    )


def node(
    tenant: str,
    node_id: str,
    node_type: str,
    project: str | None,
    title: str | None,
    url: str | None,
    text: dict[str, str],
    properties: dict[str, Any],
    secured: bool = False,
    acl: list[str] | None = None,
) -> dict[str, Any]:
    return {
        "tenantId": tenant,
        "id": node_id,
        "nodeType": node_type,
        "projectKey": project,
        "title": title,
        "url": url,
        "secured": secured,
        "acl": sorted(acl or []),
        "text": text,
        "properties": properties,
    }


def edge(tenant: str, edge_type: str, source: str, target: str) -> dict[str, Any]:
    return {"tenantId": tenant, "edgeType": edge_type, "fromNodeId": source, "toNodeId": target, "properties": {}}


def build() -> dict[str, Any]:
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    counters: dict[str, int] = {}
    people_ids = {t: [f"{t}:person:{p[0]}" for p in ps] for t, ps in PEOPLE.items()}
    for tenant, people in PEOPLE.items():
        for handle, name, team in people:
            nodes.append(
                node(
                    tenant,
                    f"{tenant}:person:{handle}",
                    "cdm.person",
                    None,
                    name,
                    None,
                    {},
                    {"email": f"{handle}@{tenant}.example", "team": team},
                )
            )
    work_by_project: dict[tuple[str, str], list[str]] = {}
    code_by_project: dict[tuple[str, str], list[str]] = {}
    for topic in TOPICS:
        tenant, project = topic["tenant"], topic["project"]
        cluster_id = f"{tenant}:cluster:{topic['slug']}"
        nodes.append(
            node(
                tenant,
                cluster_id,
                "kg.cluster",
                project,
                topic["title"],
                None,
                {"summary": topic["summary"]},
                {"clusterKind": "episode"},
            )
        )
        work_ids, doc_ids, code_ids, signal_ids = [], [], [], []
        for title, summary in topic["work"]:
            counters[project] = counters.get(project, 100) + 1
            key = f"{project}-{counters[project]}"
            wid = f"{tenant}:work:{key}"
            description = (
                f"Background: this came out of the {topic['title'].lower()} episode. "
                f"{topic['summary']}\n\nAcceptance criteria:\n- {title} is covered by tests\n"
                f"- metrics and alerts exist for the new behaviour\n- the runbook is updated\n\n"
                + "Notes from refinement: "
                + " ".join(f"We discussed {w[0].lower()} as a dependency." for w in topic["work"] if w[0] != title)
            )
            nodes.append(
                node(
                    tenant,
                    wid,
                    "cdm.work_item",
                    project,
                    title,
                    f"{TRACKER[tenant]}/{key}",
                    {"summary": summary, "description": description},
                    {
                        "status": RNG.choice(STATUSES),
                        "priority": RNG.choice(PRIORITIES),
                        "labels": sorted({topic["slug"], project.lower()}),
                    },
                )
            )
            work_ids.append(wid)
            edges.append(edge(tenant, "IN_CLUSTER", wid, cluster_id))
            edges.append(edge(tenant, "ASSIGNED_TO", wid, RNG.choice(people_ids[tenant])))
        for title, kind, secured, acl in topic["docs"]:
            did = f"{tenant}:doc:{slugify(title)}"
            body = paragraphs(topic, title, kind, 7 if kind == "design" else 5)
            nodes.append(
                node(
                    tenant,
                    did,
                    "cdm.doc",
                    project,
                    title,
                    f"{WIKI[tenant]}/{slugify(title)}",
                    {"body": body},
                    {"docKind": kind, "owner": RNG.choice(PEOPLE[tenant])[1]},
                    secured,
                    acl,
                )
            )
            doc_ids.append(did)
            edges.append(edge(tenant, "IN_CLUSTER", did, cluster_id))
        for path, summary in topic["code"]:
            cid = f"{tenant}:code:{path}"
            nodes.append(
                node(
                    tenant,
                    cid,
                    "code.file",
                    project,
                    path,
                    f"{REPO[tenant]}/{path}",
                    {"summary": summary, "body": code_body(path, summary)},
                    {
                        "language": "go" if path.endswith(".go") else "python",
                        "path": path,
                        "repo": "platform" if tenant == "acme" else "core",
                    },
                )
            )
            code_ids.append(cid)
        for index, (kind, severity, title, day) in enumerate(topic["signals"]):
            sid = f"{tenant}:signal:{topic['slug']}-{index + 1}"
            nodes.append(
                node(
                    tenant,
                    sid,
                    "signal.instance",
                    project,
                    title,
                    None,
                    {"summary": f"{title}. Related to {topic['title'].lower()}."},
                    {"signalKind": kind, "severity": severity, "occurredAt": day},
                )
            )
            signal_ids.append(sid)
            edges.append(edge(tenant, "IN_CLUSTER", sid, cluster_id))
        for i, wid in enumerate(work_ids):
            edges.append(edge(tenant, "REFERENCES", wid, doc_ids[i % len(doc_ids)]))
            edges.append(edge(tenant, "IMPLEMENTED_BY", wid, code_ids[i % len(code_ids)]))
            edges.append(edge(tenant, "HAS_SIGNAL", wid, signal_ids[i % len(signal_ids)]))
            if i:
                edges.append(edge(tenant, "DEPENDS_ON", wid, work_ids[0]))
        for did in doc_ids:
            edges.append(edge(tenant, "DOCUMENTS", did, code_ids[0]))
        for cid in code_ids[1:]:
            edges.append(edge(tenant, "DEPENDS_ON", cid, code_ids[0]))
        edges.append(edge(tenant, "HAS_SIGNAL", code_ids[0], signal_ids[0]))
        work_by_project.setdefault((tenant, project), []).extend(work_ids)
        code_by_project.setdefault((tenant, project), []).extend(code_ids)

    # Filler work items per project, a theme cluster per project.
    for (tenant, project), titles in sorted(
        {(t["tenant"], t["project"]): FILLER_WORK[t["project"]] for t in TOPICS}.items()
    ):
        theme_id = f"{tenant}:cluster:{project.lower()}-maintenance"
        nodes.append(
            node(
                tenant,
                theme_id,
                "kg.cluster",
                project,
                f"{project} maintenance and small features",
                None,
                {"summary": f"Smaller {project} work items that are not part of an incident."},
                {"clusterKind": "theme"},
            )
        )
        for title in titles:
            counters[project] = counters.get(project, 100) + 1
            key = f"{project}-{counters[project]}"
            wid = f"{tenant}:work:{key}"
            nodes.append(
                node(
                    tenant,
                    wid,
                    "cdm.work_item",
                    project,
                    title,
                    f"{TRACKER[tenant]}/{key}",
                    {"summary": f"{title} for the {project} team."},
                    {"status": RNG.choice(STATUSES), "priority": RNG.choice(PRIORITIES), "labels": [project.lower()]},
                )
            )
            edges.append(edge(tenant, "IN_CLUSTER", wid, theme_id))
            edges.append(edge(tenant, "ASSIGNED_TO", wid, RNG.choice(people_ids[tenant])))
            if RNG.random() < 0.5:
                edges.append(edge(tenant, "IMPLEMENTED_BY", wid, RNG.choice(code_by_project[(tenant, project)])))
            if RNG.random() < 0.6:
                kind, severity = RNG.choice([("alert", "sev4"), ("feedback", "info"), ("deploy", "info")])
                sid = f"{tenant}:signal:{key.lower()}"
                nodes.append(
                    node(
                        tenant,
                        sid,
                        "signal.instance",
                        project,
                        f"{kind.title()}: {title.lower()}",
                        None,
                        {"summary": f"{kind.title()} about {title.lower()}."},
                        {
                            "signalKind": kind,
                            "severity": severity,
                            "occurredAt": f"2026-0{RNG.randint(1, 9)}-1{RNG.randint(0, 9)}",
                        },
                    )
                )
                edges.append(edge(tenant, "HAS_SIGNAL", wid, sid))
        for doc_title, kind in (
            (f"{project} team conventions", "guide"),
            (f"{project} on-call handbook", "runbook"),
            (f"{project} quarterly roadmap", "design"),
        ):
            did = f"{tenant}:doc:{slugify(doc_title)}"
            body = f"This page describes how the {project} team works: " + " ".join(
                f"{t} is tracked on the board." for t in titles
            )
            nodes.append(
                node(
                    tenant,
                    did,
                    "cdm.doc",
                    project,
                    doc_title,
                    f"{WIKI[tenant]}/{slugify(doc_title)}",
                    {"body": body},
                    {"docKind": kind, "owner": RNG.choice(PEOPLE[tenant])[1]},
                )
            )
            edges.append(edge(tenant, "IN_CLUSTER", did, theme_id))
        # one episode work item also belongs to the theme
        edges.append(edge(tenant, "IN_CLUSTER", work_by_project[(tenant, project)][-1], theme_id))

    # Cross-project signal in acme, identical titles across projects, a node without text, a shared id.
    nodes.append(
        node(
            "acme",
            "acme:signal:edge-proxy-tls",
            "signal.instance",
            "PAY",
            "Edge proxy TLS certificate expiring",
            None,
            {"summary": "The shared edge proxy certificate expires in 7 days."},
            {"signalKind": "alert", "severity": "sev3", "occurredAt": "2026-08-01"},
        )
    )
    edges.append(edge("acme", "HAS_SIGNAL", "acme:work:PAY-101", "acme:signal:edge-proxy-tls"))
    edges.append(edge("acme", "HAS_SIGNAL", "acme:work:AUTH-101", "acme:signal:edge-proxy-tls"))
    for tenant, project in (("acme", "PAY"), ("acme", "SEARCH")):
        counters[project] += 1
        key = f"{project}-{counters[project]}"
        nodes.append(
            node(
                tenant,
                f"{tenant}:work:{key}",
                "cdm.work_item",
                project,
                "Upgrade logging library",
                f"{TRACKER[tenant]}/{key}",
                {"summary": "Upgrade the logging library to the supported version."},
                {"status": "open", "priority": "low", "labels": ["chore"]},
            )
        )
    nodes.append(
        node(
            "acme",
            "acme:doc:untitled-draft",
            "cdm.doc",
            "SEARCH",
            None,
            None,
            {},
            {"docKind": "design", "owner": "Chen Wei"},
        )
    )
    for tenant in ("acme", "globex"):
        project = "AUTH" if tenant == "acme" else "CORE"
        nodes.append(
            node(
                tenant,
                "shared:doc:onboarding",
                "cdm.doc",
                project,
                f"Engineering onboarding at {tenant.title()}",
                f"{WIKI[tenant]}/onboarding",
                {
                    "body": f"Welcome to {tenant.title()}. Set up your laptop, request access to the token "
                    f"refresh dashboards and read the on-call guide."
                },
                {"docKind": "guide", "owner": "Platform"},
            )
        )
    # A secured doc that is the only reference of a work item.
    nodes.append(
        node(
            "acme",
            "acme:doc:security-review-sso",
            "cdm.doc",
            "AUTH",
            "Security review: SSO token handling",
            f"{WIKI['acme']}/security-review-sso",
            {
                "body": "Findings of the SSO token handling review: refresh tokens are stored encrypted; "
                "two findings about token refresh logging are open."
            },
            {"docKind": "design", "owner": "Alice Moreau"},
            True,
            ["group:security"],
        )
    )
    edges.append(edge("acme", "REFERENCES", "acme:work:AUTH-109", "acme:doc:security-review-sso"))

    nodes.sort(key=lambda n: (n["tenantId"], n["id"]))
    unique = {(e["tenantId"], e["edgeType"], e["fromNodeId"], e["toNodeId"]): e for e in edges}
    return {
        "formatVersion": 1,
        "description": "Example knowledge graph of two tenants (acme, globex) for brain-graph demos and tests.",
        "nodes": nodes,
        "edges": [unique[k] for k in sorted(unique)],
    }


def render() -> str:
    """The file's exact text."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
