package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.StringWriter;

/**
 * MySQL Enterprise Audit ({@code audit_log_format=JSON}) and Percona's audit_log_filter component
 * ({@code audit_log_filter.format=JSON} or {@code JSONL}): the file is one JSON array, {@code [} at
 * its start, records separated by commas, {@code ]} only when the server closes the file. Older
 * versions pretty-print each record over several lines, newer ones (and JSONL) write one compact
 * record per line; the collector frames a record whole either way (docs/formats.md, "Framing"), so
 * a message is one record with, around it, what belongs to the array: a leading {@code [} or {@code
 * ,}, a trailing {@code ,} or {@code ]}. Nothing else is accepted around it.
 *
 * <p>The record ({@code class}/{@code event} model): {@code {"timestamp": "2019-10-03 13:50:01",
 * "id": 2, "class": "connection", "event": "connect", "connection_id": 11, "account": {"user": ..,
 * "host": ..}, "login": {"user": .., "os": .., "ip": .., "proxy": ..}, "connection_data":
 * {"connection_type": .., "status": 0, "db": ..}}} and per class {@code general_data}, {@code
 * table_access_data}, {@code query_data}, {@code command_data}, {@code startup_data}, {@code
 * shutdown_data} ... Required: timestamp, id, class.
 *
 * <p>Identity: timestamp and id ("within the audit log, timestamp/id pairs are unique" says the
 * MySQL manual): {@code record_id} = {@code <timestamp>_<id>}, e.g. {@code 2019-10-03T13:50:01_2}.
 * The timestamp has no zone: MySQL Enterprise writes UTC; it is read in the source's time zone
 * (default UTC) for writers that use local time.
 *
 * <p>Mapping: {@code event_name} = event (or class when there is none), {@code extra.class} =
 * class; {@code user} = login.user, {@code priv_user} = account.user, {@code extra.priv_host} =
 * account.host, {@code ip} = login.ip, {@code os_login} = login.os, {@code proxy_user} =
 * login.proxy; from the class's data object: status, db, query ({@code sqltext}), sql_command
 * ({@code command_class}), table ({@code extra.table}); the data object's other fields as one JSON
 * object in {@code extra.<object>} (e.g. {@code extra.connection_data =
 * {"connection_type":"ssl"}}), other top-level fields in {@code extra} as text. A {@code connect}
 * or {@code change_user} event with status 0 is a successful login, other statuses failed ones.
 */
public final class MysqlEnterpriseJsonParser extends ReadableRecordParser {
    public static final String FORMAT = "mysql-enterprise-json";

    public MysqlEnterpriseJsonParser() {
        super(FORMAT, FRAMING);
    }

    private static final long NO_TIMESTAMP = Long.MIN_VALUE;

    /**
     * A record starts with a line that opens an object at indent 0 to 2 ({@code   {} pretty-printed,
     * {@code { "timestamp": ...} compact, maybe after the separating comma) and ends with the line
     * that closes it at that indent ({@code   },}), or is that whole compact line. Inner lines of a
     * pretty-printed record are indented 4 or more.
     */
    static final Framing FRAMING = new Framing("^ {0,2},? *[{]", "^ {0,2}([{].*)?[}] *,? *$");

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        int from = 0;
        // what belongs to the array before a record: '[' (the file's start) or ',' (the separator)
        boolean arrayOpen = false, comma = false;
        while (from < line.length) {
            byte c = line[from];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                from++;
            } else if (c == '[' && !arrayOpen && !comma) {
                arrayOpen = true;
                from++;
            } else if (c == ',' && !comma) {
                comma = true;
                from++;
            } else {
                break;
            }
        }
        if (from == line.length) {
            return ParseResult.framing("the JSON array's '[', ',' or ']'");
        }
        // what may follow a record: ',' (more to come), ']' (the file was closed), or both
        int to = trimEnd(line, line.length);
        if (to > from && line[to - 1] == ']') to = trimEnd(line, to - 1);
        if (to > from && line[to - 1] == ',') to = trimEnd(line, to - 1);
        if (to <= from) {
            return ParseResult.framing("the JSON array's '[', ',' or ']'");
        }
        AuditEvent e = new AuditEvent();
        e.eventTimeMillis = NO_TIMESTAMP;
        String timestamp = null, id = null, eventClass = null, event = null;
        try (JsonParser p = RecordText.JSON.createParser(line, from, to - from)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return ParseResult.failed("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                switch (field) {
                    case "timestamp" -> {
                        if (value != JsonToken.VALUE_STRING)
                            return ParseResult.failed(
                                    "field 'timestamp' is "
                                            + RecordText.describe(value)
                                            + ", expected a string");
                        timestamp = p.getText();
                    }
                    case "id" -> {
                        if (value != JsonToken.VALUE_NUMBER_INT
                                && !(value == JsonToken.VALUE_STRING
                                        && p.getText().matches("\\d+"))) {
                            return ParseResult.failed(
                                    RecordText.wrongType(p, value, "id", "an integer"));
                        }
                        id = p.getText();
                    }
                    case "class" -> {
                        if (value != JsonToken.VALUE_STRING)
                            return failedSkipping(p, value, "class");
                        eventClass = p.getText();
                    }
                    case "event" -> {
                        if (value != JsonToken.VALUE_STRING)
                            return failedSkipping(p, value, "event");
                        event = p.getText();
                    }
                    case "connection_id" -> {
                        String problem = integer(p, value, e, "connection_id", "connection_id");
                        if (problem != null) return ParseResult.failed(problem);
                    }
                    case "account", "login" -> {
                        if (value != JsonToken.START_OBJECT)
                            return ParseResult.failed(
                                    "field '"
                                            + field
                                            + "' is "
                                            + RecordText.describe(value)
                                            + ", expected an object");
                        {
                            String problem = readIdentity(p, field, e);
                            if (problem != null) return ParseResult.failed(problem);
                        }
                    }
                    default -> {
                        if (field.endsWith("_data") && value == JsonToken.START_OBJECT) {
                            String problem = readData(p, field, e);
                            if (problem != null) return ParseResult.failed(problem);
                        } else {
                            e.extra.put(field, RecordText.anyAsText(p, value));
                        }
                    }
                }
            }
            if (p.nextToken() != null) {
                return ParseResult.failed("more than one record in one message");
            }
        } catch (IOException | RuntimeException ex) {
            return RecordText.unreadable(ex, true);
        }
        if (timestamp == null) return ParseResult.failed("missing required field 'timestamp'");
        if (id == null) return ParseResult.failed("missing required field 'id'");
        if (eventClass == null || eventClass.isEmpty())
            return ParseResult.failed("missing required field 'class'");
        try {
            e.eventTimeMillis = AuditTimestamps.parseEpochMillis(timestamp, source.zone());
        } catch (IllegalArgumentException ex) {
            return ParseResult.failed(ex.getMessage());
        }
        splitAccounts(e);
        e.eventName = event == null || event.isEmpty() ? eventClass : event;
        e.extra.put("class", eventClass);
        e.recordId = timestamp.trim().replace(' ', 'T') + "_" + id;
        e.setSource(source);
        e.id = EventIds.eventId(source.server(), e.recordId);
        if ("connection".equals(eventClass)
                && ("connect".equals(event) || "change_user".equals(event))) {
            e.authOutcome = e.loginOutcome();
        }
        return ParseResult.ok(e);
    }

    /**
     * Percona's audit_log_filter writes the whole {@code user[priv_user] @ host [ip]} into {@code
     * account.user} and {@code login.user}: read into its parts (the text kept in {@code
     * user_raw}), the parts filling only what the record left empty.
     */
    private static void splitAccounts(AuditEvent e) {
        MysqlAccount account = MysqlAccount.parse(e.user);
        if (account != null) {
            e.userRaw = e.user;
            e.user = account.user();
            if (PerconaRecords.isEmpty(e.host)) e.host = account.host();
            if (PerconaRecords.isEmpty(e.ip)) e.ip = account.ip();
        }
        MysqlAccount priv = MysqlAccount.parse(e.privUser);
        if (priv != null) {
            if (e.userRaw == null) e.userRaw = e.privUser;
            e.privUser = priv.privUser();
            if (PerconaRecords.isEmpty(e.host)) e.host = priv.host();
            if (PerconaRecords.isEmpty(e.ip)) e.ip = priv.ip();
        }
    }

    private static int trimEnd(byte[] b, int to) {
        while (to > 0
                && (b[to - 1] == ' '
                        || b[to - 1] == '\t'
                        || b[to - 1] == '\r'
                        || b[to - 1] == '\n')) to--;
        return to;
    }

    private static ParseResult failedSkipping(JsonParser p, JsonToken value, String field)
            throws IOException {
        return ParseResult.failed(RecordText.wrongType(p, value, field, "a string"));
    }

    /**
     * account {user, host} or login {user, os, ip, proxy}; other fields kept in
     * extra.&lt;object&gt; as JSON.
     */
    private static String readIdentity(JsonParser p, String object, AuditEvent e)
            throws IOException {
        Rest rest = new Rest();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            String name = object + "." + field;
            if (!KNOWN_IDENTITY.contains(name)) {
                rest.add(p, field);
                continue;
            }
            if (value != JsonToken.VALUE_STRING && value != JsonToken.VALUE_NULL) {
                return RecordText.wrongType(p, value, name, "a string");
            }
            String text = value == JsonToken.VALUE_NULL ? null : p.getText();
            switch (name) {
                case "account.user" -> e.privUser = text;
                case "account.host" -> e.extra.put("priv_host", text);
                case "login.user" -> e.user = text;
                case "login.os" -> e.osLogin = text;
                case "login.ip" -> e.ip = text;
                case "login.proxy" -> e.proxyUser = text;
                default -> throw new IllegalStateException(name);
            }
        }
        rest.putInto(e, object);
        return null;
    }

    private static final java.util.Set<String> KNOWN_IDENTITY =
            java.util.Set.of(
                    "account.user",
                    "account.host",
                    "login.user",
                    "login.os",
                    "login.ip",
                    "login.proxy");

    /**
     * The fields of an object that the model has no place for, as one compact JSON object kept in
     * {@code extra} under the object's name ({@code extra.connection_data =
     * {"connection_type":"ssl"}}): a key with a dot ({@code connection_data.connection_type}) is
     * one MongoDB and FerretDB refuse.
     */
    private static final class Rest {
        private StringWriter out;
        private JsonGenerator g;

        void add(JsonParser p, String field) throws IOException {
            if (g == null) {
                out = new StringWriter();
                g = RecordText.JSON.createGenerator(out);
                g.writeStartObject();
            }
            g.writeFieldName(field);
            g.copyCurrentStructure(p);
        }

        void putInto(AuditEvent e, String object) throws IOException {
            if (g == null) return;
            g.writeEndObject();
            g.close();
            e.extra.put(object, out.toString());
        }
    }

    /** One class's data object: connection_data, general_data, table_access_data, query_data ... */
    private static String readData(JsonParser p, String object, AuditEvent e) throws IOException {
        Rest rest = new Rest();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            String name = object + "." + field;
            switch (field) {
                case "status" -> {
                    String problem = integer(p, value, e, "status", name);
                    if (problem != null) return problem;
                }
                case "db", "query", "sql_command", "table" -> {
                    if (value != JsonToken.VALUE_STRING && value != JsonToken.VALUE_NULL) {
                        return RecordText.wrongType(p, value, name, "a string");
                    }
                    String text = value == JsonToken.VALUE_NULL ? null : p.getText();
                    if ("db".equals(field)) e.db = text;
                    else if ("query".equals(field)) e.sqltext = text;
                    else if ("sql_command".equals(field)) e.commandClass = text;
                    else e.extra.put("table", text);
                }
                default -> rest.add(p, field);
            }
        }
        rest.putInto(e, object);
        return null;
    }

    /**
     * status or connection_id, a number or a string of digits; {@code shown} names it in the
     * problem.
     */
    private static String integer(
            JsonParser p, JsonToken value, AuditEvent e, String field, String shown)
            throws IOException {
        if (value == JsonToken.VALUE_NULL) return null;
        if (value != JsonToken.VALUE_NUMBER_INT && value != JsonToken.VALUE_STRING) {
            return RecordText.wrongType(p, value, shown, "an integer");
        }
        if (value == JsonToken.VALUE_STRING && p.getText().isEmpty()) return null;
        return PerconaRecords.setInteger(e, field, p.getText()) == null
                ? null
                : "field '" + shown + "' is not an integer: '" + p.getText() + "'";
    }

    private static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
