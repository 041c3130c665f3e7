package io.auditpipe.flink.sink;

import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.auditpipe.enrich.Frameworks;
import io.auditpipe.flink.alerts.AlertRule;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.HourRow;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.RollupRow;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.parser.Digests;
import io.auditpipe.parser.Utf8;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * Where records become the store's write models: events ({@link EventDocument}), alerts, chain
 * heads, servers, stats rows and dead letters. Field names are those of schemas/*.schema.json.
 *
 * <p>Events and dead letters are inserts with a deterministic {@code _id}: a second insert of the
 * same record fails with a duplicate key, which the sink counts and ignores. That is how replays
 * stay exact, and it needs no update of the capped collection. Stats rows are upserts of the full
 * count, which only ever raise it ({@code $max}), so rewriting them, late too, is harmless.
 */
public final class StoreDocuments {
    private StoreDocuments() {}

    /**
     * Longest reading copy ({@code text}) of a dead letter's original bytes; base64 keeps them all.
     */
    public static final int TEXT_EXCERPT_BYTES = 64 * 1024;

    private static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    /**
     * An event as a store insert, its BSON encoded here, on the task's thread (EncodedDocument says
     * why).
     */
    public static WriteModel<Document> eventInsert(IngestedEvent ie) {
        return new InsertOneModel<>(
                EncodedDocument.of(ie.document != null ? ie.document : EventDocument.of(ie)));
    }

    /**
     * An alert as a store insert: its deterministic id makes a replayed alert a duplicate key,
     * ignored.
     */
    public static WriteModel<Document> alertInsert(io.auditpipe.flink.alerts.Alert a) {
        return new InsertOneModel<>(alert(a));
    }

    /** The alert document (docs/alerts.md); the same JSON goes to audit.alerts and the webhook. */
    public static Document alert(io.auditpipe.flink.alerts.Alert a) {
        Document d =
                new Document("_id", a.id)
                        .append("rule", a.rule)
                        .append("severity", a.severity)
                        .append("server", a.server)
                        .append("subject", a.subject)
                        .append("summary", a.summary)
                        .append("first_event_time", new Date(a.firstEventMillis))
                        .append("last_event_time", new Date(a.lastEventMillis))
                        .append("evidence", a.evidence)
                        .append("evidence_count", a.evidenceCount)
                        .append("controls", a.controls)
                        .append("frameworks", frameworks(a.rule))
                        .append("raised_at", new Date(a.raisedAtMillis));
        if (a.gapClass != null) d.append("gap_class", a.gapClass);
        return d;
    }

    /**
     * A session's version as an upsert by its id. A session's fields only grow (a login, a logout,
     * more records), so setting them replaces the version before whole; a replay from a checkpoint
     * writes the same versions again in the same order, the newest last.
     */
    public static WriteModel<Document> sessionUpsert(io.auditpipe.flink.sessions.Session s) {
        Document fields = session(s);
        String id = (String) fields.remove("_id");
        return upsert(id, fields);
    }

    /** A principal's baseline (schemas/baseline.schema.json), replaced whole by its id. */
    public static WriteModel<Document> baselineUpsert(io.auditpipe.flink.baselines.Profile p) {
        Document fields = baseline(p);
        String id = (String) fields.remove("_id");
        return upsert(id, fields);
    }

    /** The id of a principal's baseline: its server and user. */
    public static String baselineId(String server, String user) {
        return server + "/" + user;
    }

    /** A principal's baseline as a document: what {@link #profileOf} reads back. */
    public static Document baseline(io.auditpipe.flink.baselines.Profile p) {
        List<Integer> activeDays = new ArrayList<>();
        for (int d : p.activeDays) activeDays.add(d);
        List<Long> lastActiveDay = new ArrayList<>();
        for (long d : p.lastActiveDay) lastActiveDay.add(d);
        return new Document("_id", baselineId(p.server, p.user))
                .append("server", p.server)
                .append("user", p.user)
                .append("since", new Date(p.sinceMillis))
                .append("last_event_time", new Date(p.lastMillis))
                .append("objects", new ArrayList<>(p.objects))
                .append("active_days", activeDays)
                .append("last_active_day", lastActiveDay)
                .append("hour_start", p.hourStart)
                .append("hour_records", p.hourRecords)
                .append("hour_alerted", p.hourAlerted)
                .append("hours", p.hours)
                .append("mean", p.mean)
                .append("m2", p.m2)
                .append("origins", new ArrayList<>(p.origins))
                .append("origins_seen", new ArrayList<>(p.originsSeen))
                .append("off_hours_alerted", p.offHoursAlerted)
                .append("updated_at", new Date());
    }

    /** A stored baseline back as the job's state ({@link #baseline}'s inverse). */
    public static io.auditpipe.flink.baselines.Profile profileOf(Document d) {
        io.auditpipe.flink.baselines.Profile p = new io.auditpipe.flink.baselines.Profile();
        p.server = d.getString("server");
        p.user = d.getString("user");
        p.sinceMillis = d.getDate("since").getTime();
        p.lastMillis = d.getDate("last_event_time").getTime();
        p.objects = new ArrayList<>(d.getList("objects", String.class));
        List<?> activeDays = d.getList("active_days", Object.class);
        List<?> lastActiveDay = d.getList("last_active_day", Object.class);
        for (int h = 0; h < 24; h++) {
            p.activeDays[h] = ((Number) activeDays.get(h)).intValue();
            p.lastActiveDay[h] = ((Number) lastActiveDay.get(h)).longValue();
        }
        p.hourStart = ((Number) d.get("hour_start")).longValue();
        p.hourRecords = ((Number) d.get("hour_records")).longValue();
        p.hourAlerted = d.getBoolean("hour_alerted");
        p.hours = ((Number) d.get("hours")).longValue();
        p.mean = ((Number) d.get("mean")).doubleValue();
        p.m2 = ((Number) d.get("m2")).doubleValue();
        p.origins = new ArrayList<>(d.getList("origins", String.class));
        for (Object seen : d.getList("origins_seen", Object.class))
            p.originsSeen.add(((Number) seen).longValue());
        p.offHoursAlerted = ((Number) d.get("off_hours_alerted")).longValue();
        return p;
    }

    /**
     * A session (schemas/session.schema.json): the newest version of it replaces the one before, by
     * id.
     */
    public static Document session(io.auditpipe.flink.sessions.Session s) {
        long start = s.loginMillis != null ? Math.min(s.loginMillis, s.firstMillis) : s.firstMillis;
        Document d =
                new Document("_id", s.id)
                        .append("server", s.server)
                        .append("connection_id", s.connectionId)
                        .append("user", s.user)
                        .append("host", s.host)
                        .append("ip", s.ip)
                        .append("os_user", s.osUser)
                        .append("db", s.db)
                        .append("start_time", new Date(start));
        if (s.loginMillis != null) {
            d.append("login_time", new Date(s.loginMillis))
                    .append("login_outcome", s.loginOutcome)
                    .append("login_event", s.loginEventId);
        }
        d.append("first_event_time", new Date(s.firstMillis))
                .append("last_event_time", new Date(s.lastMillis));
        if (s.logoutMillis != null) d.append("logout_time", new Date(s.logoutMillis));
        return d.append("state", s.end == null ? "open" : s.end)
                .append("duration_ms", s.durationMillis())
                .append("records", s.records)
                .append("failures", s.failures)
                .append("categories", new Document(new LinkedHashMap<String, Object>(s.categories)))
                .append("tables", s.tables)
                .append("more_tables", s.moreTables)
                .append("data_classes", s.dataClasses)
                .append("first_event", s.firstEventId)
                .append("last_event", s.lastEventId);
    }

    /** The requirements of every framework the rule serves (docs/compliance.md "Frameworks"). */
    static Document frameworks(String rule) {
        List<String> controls = List.of();
        for (AlertRule r : AlertRule.values()) {
            if (r.id.equals(rule)) controls = r.controls;
        }
        return new Document(
                new LinkedHashMap<String, Object>(Frameworks.shared().of(rule, controls)));
    }

    /**
     * A chain head as a store insert by its id ({@link io.auditpipe.flink.chain.ChainHead#id}), so
     * a head written again after a replay is ignored.
     */
    public static WriteModel<Document> chainHeadInsert(io.auditpipe.flink.chain.ChainHead h) {
        return new InsertOneModel<>(chainHead(h));
    }

    /** The chain-head document (schemas/chain-head.schema.json). */
    public static Document chainHead(io.auditpipe.flink.chain.ChainHead h) {
        Document d = new Document("_id", h.id()).append("server", h.server);
        if (h.chain != null) d.append("chain", h.chain);
        d.append("seq", h.seq)
                .append("digest", h.digest)
                .append("last_event_id", h.lastEventId)
                .append("last_event_time", new Date(h.lastEventTimeMillis))
                .append("recorded_at", new Date(h.recordedAtMillis));
        if (h.previousSeq != null) d.append("previous_seq", h.previousSeq);
        if (h.signature != null) d.append("key_id", h.keyId).append("signature", h.signature);
        return d;
    }

    /**
     * A server's entry in the servers collection, upserted with each of its chain heads. {@code
     * value} repeats the name because the Grafana data source's variable queries read a field of
     * that name and FerretDB 1.24 cannot rename a field in a pipeline. {@code $max} keeps the
     * newest time and link when a replayed, older head arrives after a newer one.
     */
    public static WriteModel<Document> serverUpsert(io.auditpipe.flink.chain.ChainHead h) {
        Document update =
                new Document("$set", new Document("value", h.server).append("server", h.server))
                        .append(
                                "$max",
                                new Document("last_event_time", new Date(h.lastEventTimeMillis))
                                        .append("last_seq", h.seq)
                                        .append("updated_at", new Date(h.recordedAtMillis)));
        return new UpdateOneModel<>(
                new Document("_id", h.server), update, new UpdateOptions().upsert(true));
    }

    public static String alertJson(io.auditpipe.flink.alerts.Alert a) {
        return alert(a).toJson(JSON);
    }

    public static WriteModel<Document> statsUpsert(StatsRow row) {
        return countUpsert(row.id(), statsFields(row), "count");
    }

    /**
     * A server's hour: its full count so far, upserted by its id; or, when it is written {@code
     * once} (imported history's hours are), inserted by its id.
     */
    public static WriteModel<Document> hour(HourRow row, boolean once) {
        return count(row.id(), hourFields(row), "count", once);
    }

    private static Document hourFields(HourRow row) {
        Document set =
                new Document("window_start", new Date(row.hourStartMillis()))
                        .append("server", row.server())
                        .append("count", row.count());
        return counted(set, row.chain());
    }

    /**
     * A count's fields closed: the import run it counts (none for the live job's), when it was
     * written.
     */
    private static Document counted(Document fields, String chain) {
        if (chain != null) fields.append("chain", chain);
        return fields.append("updated_at", new Date());
    }

    /** A document's fields set by its id, the document made if it is not there. */
    private static WriteModel<Document> upsert(String id, Document fields) {
        return new UpdateOneModel<>(
                new Document("_id", id),
                new Document("$set", fields),
                new UpdateOptions().upsert(true));
    }

    /**
     * A count's fields set by its id, the document made if it is not there, and its {@code count}
     * field raised to the value, never lowered ({@code $max}). A window's count only grows (a
     * replay from a checkpoint counts up to the same total again), while a write can reach the
     * store late: one sent before the store stopped answering, timed out and retried, is still
     * carried out when the store wakes, possibly after the newer write that followed its retry
     * (seen in the fault suite with a 20 s request timeout: a minute's count one event short).
     * {@code $set} would take the count back.
     */
    private static WriteModel<Document> countUpsert(String id, Document fields, String count) {
        Document set = new Document(fields);
        Object n = set.remove(count);
        return new UpdateOneModel<>(
                new Document("_id", id),
                new Document("$set", set).append("$max", new Document(count, n)),
                new UpdateOptions().upsert(true));
    }

    /** A count written once inserted, else upserted ({@link #countUpsert}). */
    private static WriteModel<Document> count(
            String id, Document fields, String count, boolean once) {
        return once ? insert(id, fields) : countUpsert(id, fields, count);
    }

    /** A count written once: its fields under its id. */
    private static WriteModel<Document> insert(String id, Document fields) {
        Document d = new Document("_id", id);
        d.putAll(fields);
        return new InsertOneModel<>(d);
    }

    private static Document statsFields(StatsRow row) {
        Document set =
                new Document("window_start", new Date(row.windowStartMillis))
                        .append("server", row.key.server)
                        .append("user", row.key.user)
                        .append("event_name", row.key.eventName)
                        .append("command_class", row.key.commandClass)
                        .append("status", row.key.status)
                        .append("count", row.count);
        return counted(set, row.chain);
    }

    /**
     * A day's rollup row as an upsert of its full count by its deterministic id; or, when it is
     * written {@code once} (imported history's windows fire once), an insert by its id. {@code day}
     * and {@code day_end} bound the UTC day (a query over a range reads the days that overlap it).
     */
    public static WriteModel<Document> rollup(RollupRow row, boolean once) {
        return count(row.id(), rollupFields(row), "events", once);
    }

    private static Document rollupFields(RollupRow row) {
        Document set =
                new Document("day", new Date(row.dayStartMillis))
                        .append(
                                "day_end",
                                new Date(row.dayStartMillis + RollupRow.WINDOW.toMillis()))
                        .append("server", row.key.server);
        // a field the events lack is left out, as a group by it leaves it out of the events' rows
        if (row.key.user != null) set.append("user", row.key.user);
        if (row.key.principalClass != null) set.append("principal_class", row.key.principalClass);
        if (row.key.category != null) set.append("category", row.key.category);
        if (row.key.action != null) set.append("action", row.key.action);
        set.append(
                        "controls",
                        row.key.controls.isEmpty()
                                ? List.of()
                                : List.of(row.key.controls.split(",")))
                .append("events", row.count);
        return counted(set, row.chain);
    }

    /**
     * A dead letter as a store insert, at most {@code maxBytes} as JSON (see {@link
     * #deadLetter(DeadLetter, int)}).
     */
    public static WriteModel<Document> deadLetterInsert(DeadLetter dl, int maxBytes) {
        return new InsertOneModel<>(deadLetter(dl, maxBytes));
    }

    /**
     * The dead-letter document, at most {@code maxBytes} long as JSON, whatever the size of the
     * line.
     *
     * <p>What a dead letter keeps of its line (docs/architecture.md, "Dead letters"): the exact
     * bytes as base64, whole whenever they fit; a reading copy as {@code text}, at most {@link
     * #TEXT_EXCERPT_BYTES}; and always the full length and SHA-256, so a reviewer can find the line
     * in the server's file even when it was too large to keep whole. The collectors ship lines up
     * to {@code max_line_size} and the limits derived from it let such a line's dead letter keep it
     * whole; only a line larger than that (from another producer) is cut here, and then {@code
     * original.truncated} is true and {@code original.kept_bytes} says how much is kept. A dead
     * letter that does not fit would fail its write and, replayed from the checkpoint, stop the
     * pipeline for good; this bound is what prevents it.
     */
    public static Document deadLetter(DeadLetter dl, int maxBytes) {
        byte[] value = dl.originalValue;
        int keep = value.length;
        int text = Math.min(TEXT_EXCERPT_BYTES, maxBytes / 8);
        while (true) {
            Document d = deadLetterKeeping(dl, keep, text);
            int size = d.toJson(JSON).getBytes(StandardCharsets.UTF_8).length;
            if (size <= maxBytes || (keep == 0 && text == 0)) {
                return d;
            }
            if (keep > 0) {
                long over = size - maxBytes + 1024L;
                keep = (int) Math.max(0, keep - Math.max(1, (over * 3 + 3) / 4));
            } else {
                text /= 2; // a reading copy full of escaped control characters: keep less of it
            }
        }
    }

    private static Document deadLetterKeeping(DeadLetter dl, int keep, int textBytes) {
        Document d =
                new Document("_id", dl.id)
                        .append("stage", dl.stage)
                        .append("reason", dl.reason)
                        .append("original", bytes(dl.originalValue, keep, textBytes));
        if (dl.originalKey != null) {
            int keyBytes = Math.min(dl.originalKey.length, textBytes);
            d.append("key", bytes(dl.originalKey, keyBytes, keyBytes));
        }
        putIfNotNull(d, "server", dl.server);
        putIfNotNull(d, "format", dl.format);
        putIfNotNull(d, "source_file", dl.sourceFile);
        putIfNotNull(d, "masked", dl.masked);
        if (dl.origin != null) {
            d.append("kafka", EventDocument.origin(dl.origin));
        }
        d.append("detected_at", new Date(dl.detectedAtMillis));
        return d;
    }

    /** The dead letter as JSON, for the dead-letter topic: the same fields as the document. */
    public static byte[] deadLetterJson(DeadLetter dl, int maxBytes) {
        return deadLetter(dl, maxBytes).toJson(JSON).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Original bytes: the first {@code keep} of them exactly ({@code base64}), a reading copy
     * ({@code text}: at most {@link #TEXT_EXCERPT_BYTES}, as UTF-8 with U+FFFD for bad bytes), the
     * full {@code length} and {@code sha256}; {@code truncated} and {@code kept_bytes} when cut,
     * {@code text_truncated} when the reading copy is shorter than the bytes.
     */
    static Document bytes(byte[] b, int keep, int textBytes) {
        boolean cut = keep < b.length;
        byte[] kept = cut ? Arrays.copyOf(b, keep) : b;
        int textLength = Math.min(b.length, textBytes);
        Document d =
                new Document("base64", Base64.getEncoder().encodeToString(kept))
                        .append("text", new String(b, 0, textLength, StandardCharsets.UTF_8))
                        .append("length", b.length)
                        .append("sha256", Digests.sha256Hex(b))
                        .append("valid_utf8", Utf8.firstInvalidByte(b) < 0);
        if (textLength < b.length) {
            d.append("text_truncated", true);
        }
        if (cut) {
            d.append("truncated", true).append("kept_bytes", keep);
        }
        return d;
    }

    private static void putIfNotNull(Document d, String field, Object value) {
        if (value != null) {
            d.append(field, value);
        }
    }
}
