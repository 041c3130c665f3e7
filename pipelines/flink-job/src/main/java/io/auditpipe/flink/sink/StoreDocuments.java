package io.auditpipe.flink.sink;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.Utf8;

import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Date;

/**
 * The one place where records become store documents. Field names are those of
 * schemas/audit-event.schema.json, schemas/stats.schema.json and schemas/dead-letter.schema.json.
 *
 * <p>Events and dead letters are inserts with a deterministic {@code _id}: a second insert of the
 * same record fails with a duplicate key, which the sink counts and ignores. That is how replays
 * stay exact, and it needs no update of the capped collection. Stats rows are upserts that
 * {@code $set} the full count, so rewriting them is harmless.
 */
public final class StoreDocuments {
    private StoreDocuments() {}

    /** The event field with the SHA-256 of the original line; the events sink checks duplicate keys with it. */
    public static final String LINE_DIGEST_FIELD = "line_sha256";

    private static final JsonWriterSettings JSON = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    public static WriteModel<Document> eventInsert(IngestedEvent ie) {
        return new InsertOneModel<>(event(ie));
    }

    public static Document event(IngestedEvent ie) {
        AuditEvent e = ie.event;
        Document d = new Document("_id", e.id)
                .append("server", e.server)
                .append("format", e.format)
                .append("source_file", e.sourceFile)
                .append("collector", e.collector)
                .append("record_id", e.recordId)
                .append("event_time", new Date(e.eventTimeMillis))
                .append("event_name", e.eventName);
        putIfNotNull(d, "command_class", e.commandClass);
        putIfNotNull(d, "connection_id", e.connectionId);
        putIfNotNull(d, "status", e.status);
        putIfNotNull(d, "sqltext", e.sqltext);
        putIfNotNull(d, "user", e.user);
        putIfNotNull(d, "user_raw", e.userRaw);
        putIfNotNull(d, "priv_user", e.privUser);
        putIfNotNull(d, "os_user", e.osUser);
        putIfNotNull(d, "os_login", e.osLogin);
        putIfNotNull(d, "proxy_user", e.proxyUser);
        putIfNotNull(d, "host", e.host);
        putIfNotNull(d, "ip", e.ip);
        putIfNotNull(d, "db", e.db);
        putIfNotNull(d, "auth_outcome", e.authOutcome);
        if (e.extra != null && !e.extra.isEmpty()) {
            d.append("extra", new Document(e.extra));
        }
        putIfNotNull(d, LINE_DIGEST_FIELD, ie.lineSha256);
        d.append("ingest", origin(ie.origin));
        return d;
    }

    public static WriteModel<Document> statsUpsert(StatsRow row) {
        Document set = new Document("window_start", new Date(row.windowStartMillis))
                .append("server", row.key.server)
                .append("user", row.key.user)
                .append("event_name", row.key.eventName)
                .append("command_class", row.key.commandClass)
                .append("status", row.key.status)
                .append("count", row.count)
                .append("updated_at", new Date());
        return new UpdateOneModel<>(new Document("_id", row.id()), new Document("$set", set),
                new UpdateOptions().upsert(true));
    }

    public static WriteModel<Document> deadLetterInsert(DeadLetter dl) {
        return new InsertOneModel<>(deadLetter(dl));
    }

    public static Document deadLetter(DeadLetter dl) {
        Document d = new Document("_id", dl.id)
                .append("stage", dl.stage)
                .append("reason", dl.reason)
                .append("original", bytes(dl.originalValue));
        if (dl.originalKey != null) {
            d.append("key", bytes(dl.originalKey));
        }
        putIfNotNull(d, "server", dl.server);
        putIfNotNull(d, "format", dl.format);
        putIfNotNull(d, "source_file", dl.sourceFile);
        if (dl.origin != null) {
            d.append("kafka", origin(dl.origin));
        }
        d.append("detected_at", new Date(dl.detectedAtMillis));
        return d;
    }

    /** The dead letter as JSON, for the dead-letter topic: the same fields as the document. */
    public static byte[] deadLetterJson(DeadLetter dl) {
        return deadLetter(dl).toJson(JSON).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Original bytes, exactly ({@code base64}), plus {@code text} for reading: the bytes as UTF-8
     * when they are valid UTF-8, otherwise decoded with U+FFFD for the bad bytes.
     */
    static Document bytes(byte[] b) {
        return new Document("base64", Base64.getEncoder().encodeToString(b))
                .append("text", new String(b, StandardCharsets.UTF_8))
                .append("length", b.length)
                .append("valid_utf8", Utf8.firstInvalidByte(b) < 0);
    }

    private static Document origin(KafkaOrigin o) {
        return new Document("topic", o.topic)
                .append("partition", o.partition)
                .append("offset", o.offset)
                .append("timestamp", new Date(o.timestampMillis));
    }

    private static void putIfNotNull(Document d, String field, Object value) {
        if (value != null) {
            d.append(field, value);
        }
    }
}
