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

    /**
     * Reads the fields of audit_record; returns a problem description or null.
     *
     * <p>Types are checked, never coerced: the plugin writes every text field as a JSON string, and
     * status and connection_id as integers (a number or a string of digits, by version). A record with {@code "record": 5} or an object
     * where a user name belongs is not what a server wrote, and trusting it would give it an
     * identity it does not have; it becomes a dead letter naming the field.
     */
    private static String readRecord(JsonParser p, AuditEvent e) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            boolean integerField = "status".equals(field) || "connection_id".equals(field);
            if (!KNOWN_STRING_FIELDS.contains(field) && !integerField) {
                e.extra.put(field, anyAsText(p, value));
                continue;
            }
            if (integerField) {
                // an integer, as a number or as a string of digits (versions differ); empty = absent
                if (value == JsonToken.VALUE_NULL || (value == JsonToken.VALUE_STRING && p.getText().isEmpty())) continue;
                if (value != JsonToken.VALUE_NUMBER_INT && value != JsonToken.VALUE_STRING) {
                    if (!value.isScalarValue()) p.skipChildren();
                    return "field '" + field + "' is " + describe(value) + ", expected an integer";
                }
                try {
                    if ("status".equals(field)) {
                        e.status = Integer.parseInt(p.getText().trim());
                    } else {
                        e.connectionId = Long.parseLong(p.getText().trim());
                    }
                } catch (NumberFormatException ex) {
                    return "field '" + field + "' is not an integer: '" + p.getText() + "'";
                }
                continue;
            }
            if (value != JsonToken.VALUE_STRING && value != JsonToken.VALUE_NULL) {
                if (!value.isScalarValue()) p.skipChildren();
                return "field '" + field + "' is " + describe(value) + ", expected a string";
            }
            String text = value == JsonToken.VALUE_NULL ? null : p.getText();
            switch (field) {
                case "name": e.eventName = text; break;
                case "record": e.recordId = text; break;
                case "timestamp": {
                    if (text == null) return "field 'timestamp' is null, expected a string";
                    try {
                        e.eventTimeMillis = AuditTimestamps.parseEpochMillis(text);
                    } catch (IllegalArgumentException ex) {
                        return ex.getMessage();
                    }
                    break;
                }
                case "command_class": e.commandClass = text; break;
                case "sqltext": e.sqltext = text; break;
                case "user": e.user = text; break;
                case "priv_user": e.privUser = text; break;
                case "os_user": e.osUser = text; break;
                case "os_login": e.osLogin = text; break;
                case "proxy_user": e.proxyUser = text; break;
                case "host": e.host = text; break;
                case "ip": e.ip = text; break;
                case "db": e.db = text; break;
                default: throw new IllegalStateException("unhandled field " + field);
            }
        }
        return null;
    }

    private static final java.util.Set<String> KNOWN_STRING_FIELDS = java.util.Set.of("name", "record", "timestamp",
            "command_class", "sqltext", "user", "priv_user", "os_user", "os_login", "proxy_user",
            "host", "ip", "db");

    private static String describe(JsonToken t) {
        switch (t) {
            case START_OBJECT: return "an object";
            case START_ARRAY: return "an array";
            case VALUE_NUMBER_INT: case VALUE_NUMBER_FLOAT: return "a number";
            case VALUE_TRUE: case VALUE_FALSE: return "a boolean";
            case VALUE_NULL: return "null";
            default: return "a " + t;
        }
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
