package pgstore

// schemaV1 is the first schema. Conventions: times compared with a node's
// facts (created, deadline, ended, audit time) are bigint Unix
// milliseconds, as the single-host store keeps them; lease times are
// timestamptz written from the database clock only; JSON that is hashed
// (audit metadata and detail, sandbox metadata) is canonical text, since
// jsonb would reorder keys.
const schemaV1 = `
CREATE TABLE tenants (
	name          text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
	max_sandboxes int NOT NULL DEFAULT 256 CHECK (max_sandboxes >= 0),
	created_ms    bigint NOT NULL,
	disabled_ms   bigint
);

CREATE TABLE api_keys (
	id         text PRIMARY KEY,
	tenant     text NOT NULL REFERENCES tenants,
	name       text NOT NULL,
	prefix     text NOT NULL,            -- first 8 characters of the key; not secret
	hash       text NOT NULL UNIQUE,     -- hex SHA-256 of the whole key; the key itself is never stored
	created_ms bigint NOT NULL,
	revoked_ms bigint,                   -- NULL while the key is valid
	seq        bigserial NOT NULL        -- insertion order, for "oldest first" among equal times
);
CREATE INDEX api_keys_tenant ON api_keys (tenant, created_ms, seq);

CREATE TABLE nodes (
	node_id          text PRIMARY KEY,
	epoch            bigint NOT NULL CHECK (epoch > 0),  -- fencing token: +1 on every fresh registration and every sweep
	incarnation      uuid NOT NULL,                      -- the registering daemon process
	secret_sha256    text NOT NULL,                      -- that daemon's secret, hashed
	state            text NOT NULL CHECK (state IN ('ready', 'draining', 'lost', 'left')),
	addr             text NOT NULL,
	host_class       text NOT NULL,
	capabilities     jsonb NOT NULL DEFAULT '{}',
	labels           jsonb NOT NULL DEFAULT '{}',
	cap_slots        int NOT NULL CHECK (cap_slots >= 0),
	cap_mem_mib      bigint NOT NULL CHECK (cap_mem_mib >= 0),
	cap_vcpus        int NOT NULL CHECK (cap_vcpus >= 0),
	used_slots       int NOT NULL DEFAULT 0 CHECK (used_slots >= 0),
	used_mem_mib     bigint NOT NULL DEFAULT 0 CHECK (used_mem_mib >= 0),
	used_vcpus       int NOT NULL DEFAULT 0 CHECK (used_vcpus >= 0),
	cpu_usage        real NOT NULL DEFAULT 0,
	warm             jsonb NOT NULL DEFAULT '{}',
	version          text NOT NULL,
	registered_at    timestamptz NOT NULL,
	heartbeat_at     timestamptz NOT NULL,
	lease_expires_at timestamptz NOT NULL,
	lost_at          timestamptz
);
CREATE INDEX nodes_live ON nodes (lease_expires_at) WHERE state IN ('ready', 'draining');

-- One row: when a sweep last ran, so the next one can tell a database (or
-- sweeper) outage from dead nodes. NULL: never.
CREATE TABLE cluster_state (
	id            int PRIMARY KEY CHECK (id = 1),
	last_sweep_at timestamptz
);
INSERT INTO cluster_state (id) VALUES (1);

CREATE TABLE sandboxes (
	id          text PRIMARY KEY,
	tenant      text NOT NULL REFERENCES tenants,
	template    text NOT NULL,
	build_id    text NOT NULL,
	node_id     text NOT NULL REFERENCES nodes,
	node_epoch  bigint NOT NULL,
	state       text NOT NULL CHECK (state IN ('creating', 'running', 'killed', 'expired', 'failed', 'lost')),
	end_reason  text,
	metadata    text NOT NULL DEFAULT '{}',
	egress      jsonb,
	jailed      boolean NOT NULL,
	parent_id   text REFERENCES sandboxes (id),
	idem_key    text,
	created_ms  bigint NOT NULL,
	deadline_ms bigint NOT NULL,
	ended_ms    bigint,
	updated_at  timestamptz NOT NULL DEFAULT now(),
	-- a sandbox has ended exactly when it is no longer live
	CHECK ((state IN ('creating', 'running')) = (ended_ms IS NULL)),
	CHECK ((state IN ('creating', 'running')) = (end_reason IS NULL))
);
CREATE INDEX sandboxes_tenant ON sandboxes (tenant, created_ms, id);
CREATE INDEX sandboxes_live_by_node ON sandboxes (node_id, node_epoch) WHERE state IN ('creating', 'running');
CREATE INDEX sandboxes_live_by_tenant ON sandboxes (tenant) WHERE state IN ('creating', 'running');
CREATE INDEX sandboxes_live_deadline ON sandboxes (deadline_ms) WHERE state IN ('creating', 'running');
CREATE UNIQUE INDEX sandboxes_idem ON sandboxes (tenant, idem_key) WHERE idem_key IS NOT NULL;

CREATE TABLE sandbox_metadata (
	sandbox_id text NOT NULL REFERENCES sandboxes ON DELETE CASCADE,
	key        text NOT NULL,
	value      text NOT NULL,
	PRIMARY KEY (sandbox_id, key)
);
CREATE INDEX sandbox_metadata_kv ON sandbox_metadata (key, value, sandbox_id);

-- States only move forward: creating -> running -> one terminal state,
-- or creating -> a terminal state; a terminal row never changes state,
-- end time or reason again. The store's UPDATEs already say so in their
-- WHERE; this is the database refusing anyone who does not.
CREATE FUNCTION sandboxes_forward_only() RETURNS trigger AS $$
BEGIN
	IF OLD.state NOT IN ('creating', 'running') AND (NEW.state <> OLD.state
		OR NEW.ended_ms IS DISTINCT FROM OLD.ended_ms OR NEW.end_reason IS DISTINCT FROM OLD.end_reason) THEN
		RAISE EXCEPTION 'sandbox % already ended (%)', OLD.id, OLD.state USING ERRCODE = 'P0001';
	END IF;
	IF OLD.state = 'running' AND NEW.state = 'creating' THEN
		RAISE EXCEPTION 'sandbox % cannot go back to creating', OLD.id USING ERRCODE = 'P0001';
	END IF;
	IF NEW.id <> OLD.id OR NEW.tenant <> OLD.tenant OR NEW.node_id <> OLD.node_id OR NEW.node_epoch <> OLD.node_epoch THEN
		RAISE EXCEPTION 'sandbox % cannot change its id, tenant or node', OLD.id USING ERRCODE = 'P0001';
	END IF;
	NEW.updated_at := now();
	RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER sandboxes_forward_only BEFORE UPDATE ON sandboxes
	FOR EACH ROW EXECUTE FUNCTION sandboxes_forward_only();

CREATE TABLE template_builds (
	build_id     text PRIMARY KEY,
	name         text NOT NULL,
	host_class   text NOT NULL,
	manifest     text NOT NULL,
	mem_sha256   text NOT NULL CHECK (mem_sha256 ~ '^[0-9a-f]{64}$'),
	state_sha256 text NOT NULL CHECK (state_sha256 ~ '^[0-9a-f]{64}$'),
	root_sha256  text NOT NULL CHECK (root_sha256 ~ '^[0-9a-f]{64}$'),
	size_bytes   bigint NOT NULL CHECK (size_bytes >= 0),
	memory_mib   int NOT NULL CHECK (memory_mib > 0),
	vcpus        int NOT NULL CHECK (vcpus > 0),
	default_ttl_s int NOT NULL CHECK (default_ttl_s > 0),
	published_ms bigint NOT NULL
);
CREATE INDEX template_builds_name ON template_builds (name, published_ms);
CREATE TABLE templates (
	name          text PRIMARY KEY,
	current_build text NOT NULL REFERENCES template_builds
);
CREATE TABLE node_templates (
	node_id  text NOT NULL REFERENCES nodes,
	build_id text NOT NULL REFERENCES template_builds,
	state    text NOT NULL CHECK (state IN ('pulling', 'ready', 'failed')),
	detail   text NOT NULL DEFAULT '',
	PRIMARY KEY (node_id, build_id)
);

-- One row per hash chain: a node's (its store's chain, shipped) or the
-- control chain of the API tier. head_* is the last record accepted:
-- ingest moves it by compare-and-swap only.
CREATE TABLE audit_chains (
	chain_id     uuid PRIMARY KEY,
	kind         text NOT NULL CHECK (kind IN ('node', 'control')),
	node_id      text,
	head_seq     bigint NOT NULL DEFAULT 0 CHECK (head_seq >= 0),
	head_hash    text NOT NULL DEFAULT '',
	head_time_ms bigint NOT NULL DEFAULT 0,
	ordered_seq  bigint NOT NULL DEFAULT 0 CHECK (ordered_seq >= 0 AND ordered_seq <= head_seq),
	CHECK ((kind = 'node') = (node_id IS NOT NULL))
);
-- The control chain: the API tier's own events (sweeps, write-offs).
INSERT INTO audit_chains (chain_id, kind) VALUES ('00000000-0000-0000-0000-00000000c0de', 'control');
CREATE FUNCTION audit_chains_forward_only() RETURNS trigger AS $$
BEGIN
	IF NEW.head_seq < OLD.head_seq OR NEW.ordered_seq < OLD.ordered_seq
		OR (NEW.head_seq = OLD.head_seq AND NEW.head_hash <> OLD.head_hash)
		OR NEW.kind <> OLD.kind OR NEW.node_id IS DISTINCT FROM OLD.node_id THEN
		RAISE EXCEPTION 'audit chain % only moves forward', OLD.chain_id USING ERRCODE = 'P0001';
	END IF;
	RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER audit_chains_forward_only BEFORE UPDATE ON audit_chains
	FOR EACH ROW EXECUTE FUNCTION audit_chains_forward_only();

CREATE TABLE audit (
	chain_id    uuid NOT NULL REFERENCES audit_chains,
	seq         bigint NOT NULL CHECK (seq > 0),  -- position in its chain: what the hash covers
	time_ms     bigint NOT NULL,
	tenant      text NOT NULL,
	sandbox_id  text NOT NULL,
	parent_id   text NOT NULL,
	template    text NOT NULL,
	event       text NOT NULL,
	metadata    text NOT NULL,                    -- canonical JSON object
	exit_code   int,
	bytes       bigint NOT NULL,
	duration_ms bigint NOT NULL,
	outcome     text NOT NULL,
	detail      text NOT NULL,                    -- canonical JSON object
	prev_hash   text NOT NULL,
	hash        text NOT NULL,
	PRIMARY KEY (chain_id, seq)
);
CREATE INDEX audit_time ON audit (time_ms);
CREATE TABLE audit_metadata (
	chain_id uuid NOT NULL,
	seq      bigint NOT NULL,
	key      text NOT NULL,
	value    text NOT NULL,
	PRIMARY KEY (chain_id, seq, key),
	FOREIGN KEY (chain_id, seq) REFERENCES audit
);
CREATE INDEX audit_metadata_kv ON audit_metadata (key, value, chain_id, seq);

-- The paging order. Not a sequence on audit: with many ingest
-- transactions at once, a row holding a lower number could commit after
-- a reader paged past it. The sequencer (one at a time, under an advisory
-- lock) numbers the committed rows of every chain past ordered_seq, so
-- numbers follow visibility and a reader never skips one. tenant_seq is a
-- record's number among its tenant's records, the tenant's cursor.
CREATE TABLE audit_order (
	gseq       bigint PRIMARY KEY CHECK (gseq > 0),
	chain_id   uuid NOT NULL,
	seq        bigint NOT NULL,
	tenant     text NOT NULL,
	tenant_seq bigint NOT NULL CHECK (tenant_seq > 0),
	sandbox_id text NOT NULL,
	UNIQUE (chain_id, seq),
	UNIQUE (tenant, tenant_seq),
	FOREIGN KEY (chain_id, seq) REFERENCES audit
);
CREATE INDEX audit_order_sandbox ON audit_order (sandbox_id, gseq);

-- Append-only and linked: defence in depth behind the store's own checks
-- (VerifyChain recomputes every hash rather than trusting these).
CREATE FUNCTION audit_append_only() RETURNS trigger AS $$
BEGIN
	RAISE EXCEPTION 'audit log is append-only' USING ERRCODE = 'P0001';
END $$ LANGUAGE plpgsql;
CREATE TRIGGER audit_chains_no_delete BEFORE DELETE ON audit_chains
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_metadata_no_change BEFORE UPDATE OR DELETE ON audit_metadata
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_order_no_change BEFORE UPDATE OR DELETE ON audit_order
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE FUNCTION audit_linked() RETURNS trigger AS $$
BEGIN
	IF NEW.seq = 1 THEN
		IF NEW.prev_hash <> '' THEN
			RAISE EXCEPTION 'audit record 1 of chain % links to a predecessor', NEW.chain_id USING ERRCODE = 'P0001';
		END IF;
	ELSIF NOT EXISTS (SELECT 1 FROM audit WHERE chain_id = NEW.chain_id AND seq = NEW.seq - 1 AND hash = NEW.prev_hash) THEN
		RAISE EXCEPTION 'audit record % of chain % does not link to record %', NEW.seq, NEW.chain_id, NEW.seq - 1
			USING ERRCODE = 'P0001';
	END IF;
	RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER audit_linked BEFORE INSERT ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_linked();

-- Invoices a tenant has seen, as digests only (store.InvoiceKey).
CREATE TABLE invoice_history (
	key_sha256 text PRIMARY KEY,
	seen_ms    bigint NOT NULL
);
`

// schemaV2 adds the API tier's own secrets (the master key its node
// credentials are derived from: only API processes read this database)
// and an index for the reconciler of creates left half-done.
const schemaV2 = `
CREATE TABLE cluster_secrets (
	name       text PRIMARY KEY,
	secret     bytea NOT NULL CHECK (length(secret) >= 32),
	created_ms bigint NOT NULL
);
CREATE INDEX sandboxes_creating ON sandboxes (created_ms) WHERE state = 'creating';
`

// schemaV3 records that a running sandbox is paused (saved to its node's
// disk, no VMM): the catalog's state stays running, as the single-host
// store's does, and paused_ms says since when. NULL while it runs.
const schemaV3 = `
ALTER TABLE sandboxes ADD COLUMN paused_ms bigint;
`
