package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import java.io.IOException;
import java.io.StringWriter;

/**
 * Percona Server audit_log plugin, {@code audit_log_format=JSON}: one object per line,
 * {@code {"audit_record":{"name":..,"record":..,"timestamp":..,...}}}.
 *
 * <p>Which fields appear depends on the event: {@code Audit}/{@code NoAudit} (plugin start/stop)
 * carry server details, {@code Connect}/{@code Quit}/{@code Change user} the login fields
 * ({@code priv_user}, {@code os_login}, {@code proxy_user}), query-type events ({@code Query},
 * {@code Execute}, {@code Init DB}, ...) {@code command_class}, {@code sqltext} and the account
 * string {@code user[priv] @ host [ip]}. Required in every record: name, record, timestamp.
 *
 * <p>Login outcome: a {@code Connect} or {@code Change user} with status 0 succeeded, any other
 * status (the MySQL error code, e.g. 1045 access denied) is a failed login.
 *
 * <p>Streaming Jackson, no tree: this sits on the hot path of the Flink job.
 */
public final class PerconaJsonParser implements AuditLineParser {
    public static final String FORMAT = "percona-json";
    private static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private static final JsonFactory JSON = JsonFactory.builder()
            // audit lines carry whole SQL statements; the default 20M string limit is kept,
            // anything larger is a dead letter with the reason, not a crash.
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build())
            .build();

    @Override
    public String formatName() {
        return FORMAT;
    }

    @Override
    public ParseResult parse(byte[] line, SourceDescriptor source) {
        if (line == null || line.length == 0 || isBlank(line)) {
            return ParseResult.failed("empty line");
        }
        int bad = Utf8.firstInvalidByte(line);
        if (bad >= 0) {
            return ParseResult.failed("invalid UTF-8 at byte " + bad);
        }
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return ParseResult.failed("not a JSON object");
            }
            AuditEvent event = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if ("audit_record".equals(field)) {
                    if (value != JsonToken.START_OBJECT) {
                        return ParseResult.failed("'audit_record' is not a JSON object");
                    }
                    event = new AuditEvent();
                    event.eventTimeMillis = NO_TIMESTAMP;
                    String problem = readRecord(p, event);
                    if (problem != null) {
                        return ParseResult.failed(problem);
                    }
                } else {
                    p.skipChildren();
                }
            }
            if (p.nextToken() != null) {
                return ParseResult.failed("trailing content after the JSON object");
            }
            if (event == null) {
                return ParseResult.failed("not a Percona audit record: no 'audit_record' object");
            }
            return finish(event, source);
        } catch (JsonParseException e) {
            return ParseResult.failed("invalid JSON at column " + e.getLocation().getColumnNr()
                    + ": " + e.getOriginalMessage());
        } catch (IOException | RuntimeException e) {
            return ParseResult.failed("unreadable record: " + e.getMessage());
        }
    }

    /** Reads the fields of audit_record; returns a problem description or null. */
    private static String readRecord(JsonParser p, AuditEvent e) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            switch (field) {
                case "name": e.eventName = text(p, value); break;
                case "record": e.recordId = text(p, value); break;
                case "timestamp": {
                    String ts = text(p, value);
                    if (ts == null) return "field 'timestamp' is not a string";
                    try {
                        e.eventTimeMillis = AuditTimestamps.parseEpochMillis(ts);
                    } catch (IllegalArgumentException ex) {
                        return ex.getMessage();
                    }
                    break;
                }
                case "command_class": e.commandClass = text(p, value); break;
                case "connection_id": {
                    String s = scalarText(p, value);
                    if (s != null && !s.isEmpty()) {
                        try {
                            e.connectionId = Long.parseLong(s);
                        } catch (NumberFormatException ex) {
                            return "field 'connection_id' is not an integer: '" + s + "'";
                        }
                    }
                    break;
                }
                case "status": {
                    String s = scalarText(p, value);
                    if (s != null && !s.isEmpty()) {
                        try {
                            e.status = Integer.parseInt(s);
                        } catch (NumberFormatException ex) {
                            return "field 'status' is not an integer: '" + s + "'";
                        }
                    }
                    break;
                }
                case "sqltext": e.sqltext = text(p, value); break;
                case "user": e.user = text(p, value); break;
                case "priv_user": e.privUser = text(p, value); break;
                case "os_user": e.osUser = text(p, value); break;
                case "os_login": e.osLogin = text(p, value); break;
                case "proxy_user": e.proxyUser = text(p, value); break;
                case "host": e.host = text(p, value); break;
                case "ip": e.ip = text(p, value); break;
                case "db": e.db = text(p, value); break;
                default: e.extra.put(field, anyAsText(p, value));
            }
        }
        return null;
    }

    private static ParseResult finish(AuditEvent e, SourceDescriptor source) {
        if (e.eventName == null || e.eventName.isEmpty()) {
            return ParseResult.failed("missing required field 'name'");
        }
        if (e.recordId == null || e.recordId.isEmpty()) {
            return ParseResult.failed("missing required field 'record'");
        }
        if (e.eventTimeMillis == NO_TIMESTAMP) {
            return ParseResult.failed("missing required field 'timestamp'");
        }
        e.server = source.server();
        e.format = source.format();
        e.sourceFile = source.source();
        e.collector = source.collector();
        e.id = EventIds.eventId(source.server(), e.recordId);

        MysqlAccount account = MysqlAccount.parse(e.user);
        if (account != null) {
            e.userRaw = e.user;
            e.user = account.user;
            if (isEmpty(e.privUser)) e.privUser = account.privUser;
            if (isEmpty(e.host)) e.host = account.host;
            if (isEmpty(e.ip)) e.ip = account.ip;
        }
        if ("Connect".equals(e.eventName) || "Change user".equals(e.eventName)) {
            e.authOutcome = (e.status == null || e.status == 0) ? AuditEvent.AUTH_SUCCESS : AuditEvent.AUTH_FAILURE;
        }
        return ParseResult.ok(e);
    }

    private static String text(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_STRING) return p.getText();
        if (value == JsonToken.VALUE_NULL) return null;
        return anyAsText(p, value);
    }

    private static String scalarText(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) return null;
        if (value.isScalarValue()) return p.getText();
        p.skipChildren();
        return "<" + (value == JsonToken.START_ARRAY ? "array" : "object") + ">";
    }

    /** Any JSON value as text: scalars as they are, arrays and objects as compact JSON. */
    private static String anyAsText(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) return null;
        if (value.isScalarValue()) return p.getText();
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.copyCurrentStructure(p);
        }
        return out.toString();
    }

    private static boolean isEmpty(String s) {
        return s == null || s.isEmpty();
    }

    private static boolean isBlank(byte[] b) {
        for (byte c : b) {
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
        }
        return true;
    }
}
