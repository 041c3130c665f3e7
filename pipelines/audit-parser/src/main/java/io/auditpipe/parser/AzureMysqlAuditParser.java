package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Azure Database for MySQL's audit logs, as its diagnostic settings deliver them (category {@code
 * MySqlAuditLogs}), one JSON object per line, in any of three spellings of the same fields:
 *
 * <ul>
 *   <li>Event Hubs and Storage: {@code {"time": .., "resourceId": .., "category": "MySqlAuditLogs",
 *       "operationName": "LogEvent", "properties": {"event_class": "connection_log",
 *       "event_subclass": "CONNECT", "connection_id": 11, "host": .., "ip": .., "user": .., "db":
 *       .., "sql_text": .., "error_code": 0, "thread_id": .., "table_name": .., "event_time":
 *       ..}}};
 *   <li>Log Analytics' AzureDiagnostics table: the same names flat with a suffix for their type
 *       ({@code event_class_s}, {@code connection_id_d} as a double, {@code event_time_t}, ...);
 *   <li>Log Analytics' resource-specific table {@code MySqlAuditLogs}: PascalCase columns ({@code
 *       EventClass}, {@code EventSubclass}, {@code ConnectionId} as a string, {@code SqlText},
 *       {@code ErrorCode}, {@code EventTime}, {@code TimeGenerated}).
 * </ul>
 *
 * Each name is reduced to its snake-case stem (suffix dropped, PascalCase split) and read once, so
 * the three read alike.
 *
 * <p>Mapping: {@code event_name} = event_subclass (or the class), {@code extra.class} =
 * event_class; connection_id, user, host, ip, db; {@code sqltext} = sql_text; {@code status} =
 * error_code; {@code extra.table} = table_name; the time is event_time (the statement's start),
 * else the record's time. A {@code connection_log} {@code CONNECT} (or {@code CHANGE USER}) is a
 * login, failed when its error code is not 0. Other fields in {@code extra} as text.
 *
 * <p>Identity: no record id. As for MariaDB's plugin: {@code <time>-<connection id>-<12 hex of the
 * line's SHA-256>}: a line shipped twice is one event (the same record exported in two spellings is
 * two).
 */
public final class AzureMysqlAuditParser extends ReadableRecordParser {
    public static final String FORMAT = "azure-mysql-audit";

    /** The diagnostic category of MySQL's audit logs. */
    static final String CATEGORY = "MySqlAuditLogs";

    public AzureMysqlAuditParser() {
        super(FORMAT, Framing.LINES);
    }

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        Map<String, String> f = new HashMap<>();
        AuditEvent e = new AuditEvent();
        try (JsonParser p = RecordText.JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT)
                return ParseResult.failed("not a JSON object");
            String problem = readObject(p, f, true);
            if (problem != null) return ParseResult.failed(problem);
            if (p.nextToken() != null)
                return ParseResult.failed("trailing content after the JSON object");
        } catch (IOException | RuntimeException ex) {
            return RecordText.unreadable(ex, false);
        }
        if (f.containsKey("records")) {
            return ParseResult.failed(
                    "an Event Hubs message of several records ('records' array): one record a line is read;"
                            + " write each element of 'records' on a line of its own");
        }
        String category = f.get("category");
        if (category != null && !CATEGORY.equals(category)) {
            return ParseResult.failed("category '" + clip(category) + "' is not " + CATEGORY);
        }
        String eventClass = f.get("event_class");
        if (eventClass == null || eventClass.isEmpty())
            return ParseResult.failed("missing required field 'event_class'");
        String time = first(f, "event_time", "time", "time_generated");
        if (time == null)
            return ParseResult.failed(
                    "missing required field 'event_time' (or 'time', 'TimeGenerated')");
        try {
            e.eventTimeMillis = AuditTimestamps.parseEpochMillis(time, java.time.ZoneOffset.UTC);
        } catch (IllegalArgumentException ex) {
            return ParseResult.failed(ex.getMessage());
        }
        String subclass = f.get("event_subclass");
        e.eventName = subclass == null || subclass.isEmpty() ? eventClass : subclass;
        e.extra.put("class", eventClass);
        String connection = f.get("connection_id");
        if (connection != null && !connection.isEmpty()) {
            Long id = wholeNumber(connection);
            if (id == null)
                return ParseResult.failed(
                        "field 'connection_id' is not a number: '" + clip(connection) + "'");
            e.connectionId = id;
        }
        String status = f.get("error_code");
        if (status != null && !status.isEmpty()) {
            Long code = wholeNumber(status);
            if (code == null || code > Integer.MAX_VALUE || code < Integer.MIN_VALUE) {
                return ParseResult.failed(
                        "field 'error_code' is not a number: '" + clip(status) + "'");
            }
            e.status = code.intValue();
        }
        e.user = f.get("user");
        e.host = f.get("host");
        e.ip = f.get("ip");
        e.db = emptyAsNull(f.get("db"));
        e.sqltext = emptyAsNull(f.get("sql_text"));
        String table = first(f, "table_name", "table");
        if (table != null && !table.isEmpty()) e.extra.put("table", table);
        for (Map.Entry<String, String> x : f.entrySet()) {
            if (!READ.contains(x.getKey()) && x.getValue() != null)
                e.extra.put(x.getKey(), x.getValue());
        }
        String upper = e.eventName.toUpperCase(Locale.ROOT);
        if ("connection_log".equals(eventClass)
                && ("CONNECT".equals(upper) || "CHANGE USER".equals(upper))) {
            e.authOutcome = e.loginOutcome();
        }
        e.setSource(source);
        e.recordId = EventIds.contentId(e, line);
        e.id = EventIds.eventId(source.server(), e.recordId);
        return ParseResult.ok(e);
    }

    /** The fields read into the event's own places; the rest go to extra. */
    private static final java.util.Set<String> READ =
            java.util.Set.of(
                    "category",
                    "event_class",
                    "event_subclass",
                    "event_time",
                    "time",
                    "time_generated",
                    "connection_id",
                    "error_code",
                    "user",
                    "host",
                    "ip",
                    "db",
                    "sql_text",
                    "table_name",
                    "table");

    /**
     * Reads an object's fields into {@code f} by their stems; {@code properties} (Event Hubs and
     * Storage) is read into the same map. A stem met twice keeps the first value.
     */
    private static String readObject(JsonParser p, Map<String, String> f, boolean top)
            throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken value = p.nextToken();
            if (top && "properties".equals(name) && value == JsonToken.START_OBJECT) {
                String problem = readObject(p, f, false);
                if (problem != null) return problem;
                continue;
            }
            f.putIfAbsent(stem(name), RecordText.anyAsText(p, value));
        }
        return null;
    }

    /**
     * A name's snake-case stem: {@code event_class_s} and {@code EventClass} are {@code
     * event_class}, {@code connection_id_d} and {@code ConnectionId} {@code connection_id}, {@code
     * TimeGenerated} {@code time_generated}. Log Analytics' type suffixes: _s, _d, _b, _t, _g.
     */
    static String stem(String name) {
        String n = name;
        if (n.length() > 2
                && n.charAt(n.length() - 2) == '_'
                && "sdbtg".indexOf(n.charAt(n.length() - 1)) >= 0) {
            n = n.substring(0, n.length() - 2);
        }
        if (n.indexOf('_') >= 0 || n.equals(n.toLowerCase(Locale.ROOT)))
            return n.toLowerCase(Locale.ROOT);
        StringBuilder b = new StringBuilder(n.length() + 4);
        for (int i = 0; i < n.length(); i++) {
            char c = n.charAt(i);
            if (Character.isUpperCase(c)) {
                if (i > 0 && !Character.isUpperCase(n.charAt(i - 1))) b.append('_');
                b.append(Character.toLowerCase(c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * A whole number written as digits, or as a double with no fraction (Log Analytics' _d
     * columns).
     */
    static Long wholeNumber(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException notLong) {
            try {
                double d = Double.parseDouble(text);
                if (d == Math.rint(d) && Math.abs(d) < 9.0e15) return (long) d;
            } catch (NumberFormatException notDouble) {
                // neither
            }
            return null;
        }
    }

    private static String first(Map<String, String> f, String... names) {
        for (String n : names) {
            String v = f.get(n);
            if (v != null && !v.isEmpty()) return v;
        }
        return null;
    }

    private static String emptyAsNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
