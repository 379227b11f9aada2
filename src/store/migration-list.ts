/**
 * Versioned schema changes, applied in order at open. Never edit a migration that has shipped: add the next one.
 * Each part of the product owns the tables it names; the version numbers are the only shared thing.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'stations, connectors, transactions, authorization, events and outbox',
    sql: `
      CREATE TABLE stations (
        id            TEXT PRIMARY KEY,
        site_id       TEXT,
        state         TEXT NOT NULL CHECK (state IN ('pending', 'paired', 'blocked', 'removed')),
        password_hash TEXT,
        online        INTEGER NOT NULL DEFAULT 0,
        last_seen     TEXT,
        first_seen    TEXT NOT NULL,
        boot_info     TEXT
      );
      CREATE TABLE connectors (
        station_id      TEXT NOT NULL,
        connector_id    INTEGER NOT NULL,
        charge_point_id TEXT NOT NULL,
        status          TEXT NOT NULL,
        error_code      TEXT NOT NULL,
        info            TEXT,
        updated_at      TEXT NOT NULL,
        PRIMARY KEY (station_id, connector_id)
      );
      -- AUTOINCREMENT: SQLite never hands out an id twice for the life of the file, even after deletes.
      CREATE TABLE transactions (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        site_id         TEXT NOT NULL,
        station_id      TEXT NOT NULL,
        charge_point_id TEXT NOT NULL,
        connector_id    INTEGER NOT NULL,
        id_tag          TEXT NOT NULL,
        meter_start_wh  REAL NOT NULL,
        started_at      TEXT NOT NULL,
        reservation_id  INTEGER,
        source          TEXT NOT NULL CHECK (source IN ('ocpp', 'modbus')),
        meter_stop_wh   REAL,
        stopped_at      TEXT,
        stop_reason     TEXT,
        stop_id_tag     TEXT
      );
      CREATE INDEX transactions_open_by_tag ON transactions (id_tag) WHERE stopped_at IS NULL;
      CREATE INDEX transactions_open_by_connector ON transactions (station_id, connector_id) WHERE stopped_at IS NULL;
      CREATE TABLE id_tags (
        id_tag     TEXT PRIMARY KEY,
        status     TEXT NOT NULL CHECK (status IN ('Accepted', 'Blocked', 'Expired', 'Invalid')),
        expires_at TEXT,
        site_id    TEXT,
        updated_at TEXT NOT NULL
      );
      -- Last decision the upstream CPO gave for a tag: the fallback when it times out.
      CREATE TABLE upstream_decisions (
        id_tag     TEXT PRIMARY KEY,
        status     TEXT NOT NULL,
        expires_at TEXT,
        decided_at TEXT NOT NULL
      );
      -- One row per domain event; payload is the exact JSON partners receive (docs/partners/webhooks.md#receiving-webhooks-partners).
      CREATE TABLE events (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        event_id   TEXT NOT NULL UNIQUE,
        event_type TEXT NOT NULL,
        site_id    TEXT NOT NULL,
        payload    TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      -- The outbox: one row per (event, subscribed webhook), written in the event's transaction.
      CREATE TABLE deliveries (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        event_seq       INTEGER NOT NULL REFERENCES events (seq),
        webhook_id      TEXT NOT NULL,
        site_id         TEXT NOT NULL,
        event_type      TEXT NOT NULL,
        state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
        attempts        INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL DEFAULT 0,
        last_status     INTEGER,
        last_error      TEXT,
        dead_reason     TEXT,
        updated_at      TEXT NOT NULL,
        UNIQUE (event_seq, webhook_id)
      );
      CREATE INDEX deliveries_pending ON deliveries (site_id, webhook_id, event_type, id) WHERE state = 'pending';
      CREATE INDEX deliveries_dead ON deliveries (id) WHERE state = 'dead';
      -- Bumped by CLI commands that change what the daemon caches, so it notices without a restart.
      CREATE TABLE change_counters (
        topic   TEXT PRIMARY KEY,
        version INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'webhook delivery: queue-full reports and executor health',
    sql: `
      -- Queue-full dead letters are written in the domain's transaction, which cannot log: the daemon logs each one
      -- (Webhook_QueueFull) and clears the flag, so a crash in between repeats the log line rather than losing it.
      ALTER TABLE deliveries ADD COLUMN unreported INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX deliveries_unreported ON deliveries (id) WHERE unreported = 1;
      -- Per (webhook, event type) executor: what GET /health shows, kept here so the webhook status command, another process, sees it.
      CREATE TABLE webhook_executors (
        site_id          TEXT NOT NULL,
        webhook_id       TEXT NOT NULL,
        event_type       TEXT NOT NULL,
        last_dequeue_at  INTEGER,
        last_request_at  INTEGER,
        last_request_ms  REAL,
        last_status      INTEGER,
        last_error       TEXT,
        PRIMARY KEY (site_id, webhook_id, event_type)
      );
    `,
  },
  {
    version: 5,
    name: 'modbus meter detector state and health snapshots',
    sql: `
      -- One row per meter: where its session detector stands, so a restart neither repeats a start nor loses a stop.
      CREATE TABLE meter_detectors (
        meter_id            TEXT PRIMARY KEY,
        phase               TEXT NOT NULL CHECK (phase IN ('idle', 'starting', 'charging', 'stopping')),
        phase_since         TEXT,
        candidate_energy_wh REAL,
        transaction_id      INTEGER,
        last_energy_wh      REAL,
        last_good_at        TEXT,
        updated_at          TEXT NOT NULL
      );
      -- The daemon's latest health report per meter (JSON, as GET /health shows it), read by the meter status command.
      CREATE TABLE meter_health (
        meter_id   TEXT PRIMARY KEY,
        report     TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'applications: OAuth 2.0 clients of the API',
    sql: `
      -- An application authenticates with client_id + secret (scrypt hash only) and reaches what its groups grant.
      -- Revocation keeps the row: its client_id is never handed out again and its tokens fail at once.
      CREATE TABLE applications (
        client_id   TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        description TEXT,
        secret_hash TEXT NOT NULL,
        group_ids   TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        revoked_at  TEXT
      );
    `,
  },
  {
    version: 6,
    name: 'webhook queue sizes kept by triggers',
    sql: `
      -- Pending deliveries per (webhook, event type) queue, kept by triggers in the transaction that changes the
      -- rows: the queue-full check of every new event and /health read one row instead of counting the backlog.
      CREATE TABLE webhook_queue_sizes (
        site_id    TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        size       INTEGER NOT NULL,
        PRIMARY KEY (site_id, webhook_id, event_type)
      ) WITHOUT ROWID;
      INSERT INTO webhook_queue_sizes (site_id, webhook_id, event_type, size)
        SELECT site_id, webhook_id, event_type, COUNT(*) FROM deliveries WHERE state = 'pending' GROUP BY site_id, webhook_id, event_type;
      CREATE TRIGGER webhook_queue_joined AFTER INSERT ON deliveries WHEN NEW.state = 'pending' BEGIN
        INSERT INTO webhook_queue_sizes (site_id, webhook_id, event_type, size) VALUES (NEW.site_id, NEW.webhook_id, NEW.event_type, 1)
          ON CONFLICT (site_id, webhook_id, event_type) DO UPDATE SET size = size + 1;
      END;
      CREATE TRIGGER webhook_queue_rejoined AFTER UPDATE OF state ON deliveries WHEN OLD.state <> 'pending' AND NEW.state = 'pending' BEGIN
        INSERT INTO webhook_queue_sizes (site_id, webhook_id, event_type, size) VALUES (NEW.site_id, NEW.webhook_id, NEW.event_type, 1)
          ON CONFLICT (site_id, webhook_id, event_type) DO UPDATE SET size = size + 1;
      END;
      CREATE TRIGGER webhook_queue_left AFTER UPDATE OF state ON deliveries WHEN OLD.state = 'pending' AND NEW.state <> 'pending' BEGIN
        UPDATE webhook_queue_sizes SET size = size - 1 WHERE site_id = OLD.site_id AND webhook_id = OLD.webhook_id AND event_type = OLD.event_type;
      END;
      CREATE TRIGGER webhook_queue_deleted AFTER DELETE ON deliveries WHEN OLD.state = 'pending' BEGIN
        UPDATE webhook_queue_sizes SET size = size - 1 WHERE site_id = OLD.site_id AND webhook_id = OLD.webhook_id AND event_type = OLD.event_type;
      END;
    `,
  },
  {
    version: 7,
    name: 'transactions found by their start, for a repeated StartTransaction',
    sql: `
      CREATE INDEX transactions_by_start ON transactions (station_id, connector_id, started_at);
    `,
  },
  {
    version: 8,
    name: 'stopped transactions found by their stop time, for store.retainStoppedTransactionsDays',
    sql: `
      CREATE INDEX transactions_stopped ON transactions (stopped_at) WHERE stopped_at IS NOT NULL;
    `,
  },
  {
    version: 9,
    name: 'failed attempts in a row per executor, for its health level',
    sql: `
      ALTER TABLE webhook_executors ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "when an event happened (a station's own time for start and stop), beside when it was committed",
    sql: `
      ALTER TABLE events ADD COLUMN occurred_at TEXT;
    `,
  },
  {
    version: 11,
    name: 'an application secret being rotated out stays valid until its grace ends',
    sql: `
      ALTER TABLE applications ADD COLUMN previous_secret_hash TEXT;
      ALTER TABLE applications ADD COLUMN previous_secret_expires_at TEXT;
    `,
  },
  {
    version: 12,
    name: "an OCPP 2.0.1 station's own transaction id string, mapped to chargegate's integer id",
    sql: `
      ALTER TABLE transactions ADD COLUMN station_transaction_id TEXT;
      CREATE UNIQUE INDEX transactions_by_station_transaction ON transactions (station_id, station_transaction_id) WHERE station_transaction_id IS NOT NULL;
    `,
  },
  {
    version: 13,
    name: 'a transaction an OCPP 2.0.1 station began before any event named its driver, kept across reconnects and restarts',
    sql: `
      -- At most one per connector: a newer start on it supersedes the row.
      CREATE TABLE transaction_starts_without_driver (
        station_id             TEXT NOT NULL,
        station_transaction_id TEXT NOT NULL,
        connector_id           INTEGER NOT NULL,
        started_at             TEXT NOT NULL,
        meter_start_wh         INTEGER,
        PRIMARY KEY (station_id, station_transaction_id)
      );
    `,
  },
  {
    version: 14,
    name: 'signed meter readings kept as received with their transaction, and meter keys pinned by the installer',
    sql: `
      -- docs/partners/signed-meter-values.md#signed-meter-values. transaction_id is null only for a 2.0.1 reading of a transaction no event has
      -- named the driver of yet (transaction_starts_without_driver); start() claims it.
      CREATE TABLE signed_readings (
        id                     INTEGER PRIMARY KEY AUTOINCREMENT,
        transaction_id         INTEGER REFERENCES transactions (id) ON DELETE CASCADE,
        station_id             TEXT NOT NULL,
        station_transaction_id TEXT,
        connector_id           INTEGER NOT NULL,
        context                TEXT NOT NULL,
        timestamp              TEXT NOT NULL,
        signed_meter_data      TEXT NOT NULL,
        signing_method         TEXT,
        encoding_method        TEXT,
        public_key             TEXT,
        -- 1.6: the SampledValue's value exactly as sent (the whitepaper's JSON, or the bare record).
        as_received            TEXT,
        verified               INTEGER CHECK (verified IN (0, 1)),
        -- Checked against an installer-pinned key (a failure is a security warning), not the station's own.
        against_pinned_key     INTEGER NOT NULL DEFAULT 0,
        received_at            TEXT NOT NULL
      );
      CREATE INDEX signed_readings_by_transaction ON signed_readings (transaction_id);
      CREATE INDEX signed_readings_unclaimed ON signed_readings (station_id, station_transaction_id) WHERE transaction_id IS NULL;
      CREATE INDEX signed_readings_pinned_key_failures ON signed_readings (received_at) WHERE against_pinned_key = 1 AND verified = 0;
      CREATE TABLE meter_key_pins (
        station_id TEXT NOT NULL,
        -- Hex of the key's DER SubjectPublicKeyInfo: one spelling whatever form it was given in.
        public_key TEXT NOT NULL,
        pinned_at  TEXT NOT NULL,
        PRIMARY KEY (station_id, public_key)
      );
    `,
  },
  {
    version: 15,
    name: "a circuit's temporary limit (a grid operator's dimming order), kept across restarts until it ends",
    sql: `
      -- Owned by load management (src/load/temporary-limits.ts). One per circuit (circuit ids are unique across
      -- sites); a row whose until has passed applies no more and is deleted at the next write.
      CREATE TABLE circuit_temporary_limits (
        circuit_id    TEXT PRIMARY KEY,
        site_id       TEXT NOT NULL,
        max_current_a REAL NOT NULL CHECK (max_current_a > 0),
        until         TEXT NOT NULL,
        set_at        TEXT NOT NULL,
        set_by        TEXT NOT NULL
      );
    `,
  },
  {
    version: 16,
    name: "a transaction's plain register readings: Begin, End and thinned periodic samples",
    sql: `
      -- docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear: Energy.Active.Import.Register readings a station sent for a transaction (not
      -- signed ones: signed_readings), bounded per transaction by src/site/meter-readings.ts and gone with it.
      CREATE TABLE transaction_readings (
        id             INTEGER PRIMARY KEY,
        transaction_id INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
        context        TEXT NOT NULL,
        timestamp      TEXT NOT NULL,
        energy_wh      REAL NOT NULL
      );
      CREATE INDEX transaction_readings_by_transaction ON transaction_readings (transaction_id);
    `,
  },
  {
    version: 17,
    name: "the uplink: each station's queue of messages for the CSMS, the CSMS's transaction ids, dropped counts",
    sql: `
      -- Owned by the uplink (src/uplink). A row per message to forward, written in the commit of the station call
      -- it forwards; deleted once the CSMS answered (docs/design/uplink.md#uplink-what-the-csms-sees). id is the order.
      CREATE TABLE uplink_queue (
        id             INTEGER PRIMARY KEY,
        station_id     TEXT NOT NULL,
        action         TEXT NOT NULL,
        payload        TEXT NOT NULL,
        -- chargegate's id of the transaction the message belongs to: mapped to the CSMS's when it is sent.
        transaction_id INTEGER,
        -- 1 for periodic readings: the first to go when the queue is full.
        droppable      INTEGER NOT NULL DEFAULT 0,
        queued_at      TEXT NOT NULL
      );
      CREATE INDEX uplink_queue_by_station ON uplink_queue (station_id, id);
      CREATE INDEX uplink_queue_droppable ON uplink_queue (station_id, id) WHERE droppable = 1;
      -- The CSMS's id for a transaction (NULL: its StartTransaction was dropped, so are its later messages).
      CREATE TABLE uplink_transactions (
        transaction_id      INTEGER PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
        station_id          TEXT NOT NULL,
        csms_transaction_id INTEGER
      );
      CREATE INDEX uplink_transactions_by_csms_id ON uplink_transactions (station_id, csms_transaction_id);
      CREATE TABLE uplink_dropped (
        station_id TEXT PRIMARY KEY,
        dropped    INTEGER NOT NULL
      );
    `,
  },
  {
    version: 18,
    name: "the CSMS's local authorization list of each station, beside the installer's",
    sql: `
      -- Owned by authorization (src/authorization/csms-id-tags.ts), written when a station accepted the CSMS's
      -- SendLocalList through the uplink (docs/design/uplink.md#uplink-what-the-csms-sees). The installer's entries stay in id_tags.
      CREATE TABLE csms_id_tags (
        station_id    TEXT NOT NULL,
        id_tag        TEXT NOT NULL COLLATE NOCASE,
        status        TEXT NOT NULL,
        expires_at    TEXT,
        parent_id_tag TEXT,
        updated_at    TEXT NOT NULL,
        PRIMARY KEY (station_id, id_tag)
      );
      CREATE TABLE csms_local_lists (
        station_id   TEXT PRIMARY KEY,
        list_version INTEGER NOT NULL,
        updated_at   TEXT NOT NULL
      );
    `,
  },
  {
    version: 19,
    name: "the uplink for 2.0.1 stations: each queued message's OCPP version, a 2.0.1 station's BootNotification",
    sql: `
      -- Owned by the uplink (src/uplink). The version a message was sent in: a station's link speaks the station's
      -- (docs/design/uplink.md#uplink-what-the-csms-sees). Rows written before were all 1.6.
      ALTER TABLE uplink_queue ADD COLUMN protocol TEXT NOT NULL DEFAULT 'ocpp1.6';
      -- A 2.0.1 station's last BootNotification as it sent it (stations.boot_info has it in 1.6's names): its link
      -- introduces the station with it, also after a restart while the station stays away.
      CREATE TABLE uplink_boot_notifications (
        station_id TEXT PRIMARY KEY,
        payload    TEXT NOT NULL
      );
    `,
  },
  {
    version: 20,
    name: "the CSMS's charging profiles for stations on a circuit, composed with load management's limits",
    sql: `
      -- Owned by the uplink (src/uplink/csms-profiles.ts): docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles. One row per
      -- profile the CSMS set (its id is unique per station, as on a station); profile is the version-neutral form.
      CREATE TABLE csms_charging_profiles (
        station_id          TEXT NOT NULL,
        profile_id          INTEGER NOT NULL,
        -- 0: the whole station.
        connector_id        INTEGER NOT NULL,
        -- chargegate's id of the transaction a TxProfile belongs to: gone with it.
        transaction_id      INTEGER REFERENCES transactions (id) ON DELETE CASCADE,
        -- A RemoteStartTransaction's TxProfile waiting for the transaction it starts, by its idTag.
        remote_start_id_tag TEXT,
        profile             TEXT NOT NULL,
        received_at         TEXT NOT NULL,
        PRIMARY KEY (station_id, profile_id)
      );
      -- A transaction's deletion cascades here, and its end deletes its profiles: found by this, not a scan.
      CREATE INDEX csms_charging_profiles_transaction ON csms_charging_profiles (transaction_id);
    `,
  },
  {
    version: 21,
    name: "a 2.0.1 RequestStartTransaction's charging profile waits for its transaction by the CSMS's remoteStartId",
    sql: `
      -- Owned by the uplink (src/uplink/csms-profiles.ts): the station names the transaction the remote start began by
      -- it (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles). Null for 1.6, bound by its idTag only.
      ALTER TABLE csms_charging_profiles ADD COLUMN remote_start_id INTEGER;
    `,
  },
  {
    version: 22,
    name: 'how many times the CSMS refused each queued uplink message',
    sql: `
      -- Owned by the uplink (src/uplink/queue.ts): transactionMessageAttempts counts across restarts
      -- (docs/design/uplink.md#uplink-what-the-csms-sees), so a daemon restarted while a message is refused does not try it anew.
      ALTER TABLE uplink_queue ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 23,
    name: "the last operations on each station: who asked what and the station's answer",
    sql: `
      -- Owned by src/stations/audit.ts (contract 11.1): the last 50 per station, older ones deleted as each is added.
      CREATE TABLE station_operations (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        station_id TEXT NOT NULL,
        at         TEXT NOT NULL,
        -- 'cli' or the API client id.
        who        TEXT NOT NULL,
        action     TEXT NOT NULL,
        request    TEXT NOT NULL,
        -- The station's answer as the API shows it (JSON), or null when it gave none.
        answer     TEXT,
        -- Why there was no answer: offline, timeout, error, with the message.
        error      TEXT
      );
      CREATE INDEX station_operations_station ON station_operations (station_id, id);
    `,
  },
  {
    version: 24,
    name: 'firmware images and their rollouts, station by station',
    sql: `
      -- Owned by src/firmware (contract 11.2). An image is the file dataDir/firmware/<id>, never in the database;
      -- file_name is the name stations fetch it under, signature and signing_certificate go to 2.0.1 stations.
      CREATE TABLE firmware_images (id TEXT PRIMARY KEY, file_name TEXT NOT NULL, sha256 TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL, firmware_version TEXT, signature TEXT, signing_certificate TEXT, added_at TEXT NOT NULL);
      -- state: running, stopped (a station failed: none sent since), cancelled, done; who: 'cli' or the API client.
      CREATE TABLE firmware_rollouts (id TEXT PRIMARY KEY, image_id TEXT NOT NULL, parallel INTEGER NOT NULL,
        force INTEGER NOT NULL, continue_on_failure INTEGER NOT NULL, who TEXT NOT NULL, created_at TEXT NOT NULL,
        state TEXT NOT NULL, ended_at TEXT);
      -- state: waiting, sent, downloading, downloaded, installing, installed, failed, cancelled; token: the
      -- download's secret from the moment the station is sent; old_version: its firmwareVersion then (a boot with
      -- another is the new firmware); installed_reported: a 1.6 station said Installed.
      CREATE TABLE firmware_rollout_stations (rollout_id TEXT NOT NULL, station_id TEXT NOT NULL,
        position INTEGER NOT NULL, state TEXT NOT NULL, reason TEXT, token TEXT UNIQUE, request_id INTEGER,
        old_version TEXT, installed_reported INTEGER NOT NULL DEFAULT 0, sent_at TEXT, progress_at TEXT,
        ended_at TEXT, PRIMARY KEY (rollout_id, station_id));
      CREATE INDEX firmware_rollout_stations_station ON firmware_rollout_stations (station_id, state);
    `,
  },
  {
    version: 25,
    name: 'station log collections: what was asked of each station and how its upload went',
    sql: `
      -- Owned by src/station-logs/records.ts (contract 11.3). The files live under dataDir/logs/, never here; rows
      -- are pruned with them after logs.retainDays.
      CREATE TABLE station_logs (
        id           TEXT PRIMARY KEY,
        station_id   TEXT NOT NULL,
        -- 'cli' or the API client id.
        who          TEXT NOT NULL,
        via          TEXT NOT NULL CHECK (via IN ('http', 'ftp')),
        since        TEXT,
        -- The GetLog requestId (2.0.1; sent for 1.6 too, which has none).
        request_id   INTEGER NOT NULL,
        requested_at TEXT NOT NULL,
        state        TEXT NOT NULL CHECK (state IN ('requested', 'accepted', 'uploading', 'received', 'uploaded', 'failed')),
        -- Why it failed, or why its file is gone.
        reason       TEXT,
        file_name    TEXT,
        bytes        INTEGER,
        file_removed TEXT,
        updated_at   TEXT NOT NULL
      );
      CREATE INDEX station_logs_station ON station_logs (station_id, requested_at);
    `,
  },
  {
    version: 26,
    name: 'the local list looked up by tag in any case through an index',
    sql: `
      -- Owned by authorization (src/authorization/id-tags.ts): tags match in any case, and the primary key's binary
      -- order could not serve a NOCASE lookup, so every Authorize and start read the whole list.
      CREATE INDEX id_tags_nocase ON id_tags (id_tag COLLATE NOCASE);
    `,
  },
];
