package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Cloud SQL for MySQL's database auditing ({@code cloudsql_mysql_audit}): Cloud Logging's Data
 * Access audit log entries ({@code logName .../cloudaudit.googleapis.com%2Fdata_access}) whose
 * {@code protoPayload.request} is a {@code google.cloud.sql.audit.v1.MysqlAuditEntry}, one {@code
 * LogEntry} as JSON per line: what a log sink writes to Cloud Storage, what a Pub/Sub subscription
 * delivers a message at a time, and {@code gcloud logging read --format=json} once its array is
 * written an element a line ({@code jq -c '.[]'}).
 *
 * <p>The request's fields are strings, numbers included ({@code "threadId": "9426"}, {@code
 * "errCode": "1045"}). Mapping: {@code cmd} is the command ({@code connect}, {@code quit}, {@code
 * change_user}, else a statement's class such as {@code select} or {@code create_table}, kept as
 * {@code command_class}, the event's name then {@code Query}); {@code threadId} the connection id;
 * {@code errCode} the status; {@code status} ({@code successful}/{@code unsuccessful}) decides a
 * login's outcome with the error code; {@code user}, {@code privUser}, {@code host}, {@code ip};
 * {@code query} the statement; {@code objects} (each {@code {db, name}}) in {@code extra.objects}
 * as {@code db.name} joined by commas, the first one's {@code db} the database when the request
 * names none; the time is {@code date} (the server's), else the entry's {@code timestamp}. The
 * entry's {@code insertId} and {@code resource.labels.database_id} (project:instance), the
 * request's {@code queryId}, {@code msgType} and any other field go to {@code extra}.
 *
 * <p><b>Split entries.</b> Cloud Logging splits an entry too large for it into several, each with
 * {@code split {uid, index, totalSplits}}; every field outside {@code protoPayload} is copied into
 * each part, and the request's string fields (the statement above all) are cut at the character
 * level, each part holding a piece, other fields in one part only. A record given as several lines,
 * one part each ({@link Framing#LINES_JOINING_SPLIT_ENTRIES}: the file reader of {@code import} and
 * {@code parse} gathers them), is read as the one entry they were cut from: the request's strings
 * joined in index order, lists element by element. A part alone (a tail, which sends line by line)
 * is a failure naming the split, so it becomes a dead letter; importing the exported file reads it
 * whole.
 *
 * <p>Identity: the entry's {@code insertId} (Cloud Logging's own key for it: an entry delivered
 * twice is one event), for a split entry its {@code split.uid}; without either, {@code
 * <time>-<thread id>-<12 hex of the line's SHA-256>}.
 */
public final class CloudSqlMysqlAuditParser extends ReadableRecordParser {
    public static final String FORMAT = "cloudsql-mysql-audit";

    /** The request type of a MySQL audit record, after {@code type.googleapis.com/}. */
    static final String ENTRY_TYPE = "google.cloud.sql.audit.v1.MysqlAuditEntry";

    /**
     * Nesting read at most: an entry is a few levels deep; a hostile one cannot make the reader
     * recurse for ever.
     */
    static final int MAX_DEPTH = 32;

    /** The parts of one split entry read together at most. */
    public static final int MAX_PARTS = 64;

    public CloudSqlMysqlAuditParser() {
        super(FORMAT, Framing.LINES_JOINING_SPLIT_ENTRIES);
    }

    @Override
    protected ParseResult parseReadable(byte[] record, SourceDescriptor source) {
        List<Map<String, Object>> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= record.length; i++) {
            if (i == record.length || record[i] == '\n') {
                if (i > start
                        && !RecordText.isBlank(java.util.Arrays.copyOfRange(record, start, i))) {
                    if (parts.size() == MAX_PARTS) {
                        return ParseResult.failed(
                                "more than " + MAX_PARTS + " parts of a split entry in one record");
                    }
                    Object tree;
                    try (JsonParser p = RecordText.JSON.createParser(record, start, i - start)) {
                        tree = read(p, p.nextToken(), 0);
                        if (p.nextToken() != null)
                            return ParseResult.failed("trailing content after the JSON object");
                    } catch (IOException | RuntimeException ex) {
                        return RecordText.unreadable(ex, false);
                    }
                    if (!(tree instanceof Map)) return ParseResult.failed("not a JSON object");
                    @SuppressWarnings("unchecked")
                    Map<String, Object> m = (Map<String, Object>) tree;
                    parts.add(m);
                }
                start = i + 1;
            }
        }
        if (parts.isEmpty()) return ParseResult.failed("an empty record");
        Map<String, Object> entry;
        String splitUid = null;
        Split first = Split.of(parts.get(0));
        if (first.problem != null) return ParseResult.failed(first.problem);
        if (parts.size() == 1 && first.uid != null && first.total > 1) {
            return ParseResult.failed(
                    "part "
                            + (first.index + 1)
                            + " of "
                            + first.total
                            + " of a Cloud Logging entry split in "
                            + first.total
                            + " (split.uid "
                            + clip(first.uid)
                            + "); the parts are read together from a file by"
                            + " `auditpipe import`");
        }
        if (parts.size() == 1) {
            entry = parts.get(0);
            if (first.uid != null) splitUid = first.uid;
        } else {
            String problem = checkParts(parts);
            if (problem != null) return ParseResult.failed(problem);
            parts.sort(java.util.Comparator.comparingLong(m -> Split.of(m).index));
            entry = joined(parts);
            splitUid = first.uid;
        }
        return read(entry, splitUid, record, source);
    }

    private static ParseResult read(
            Map<String, Object> entry, String splitUid, byte[] record, SourceDescriptor source) {
        if (entry.containsKey("records") || entry.containsKey("entries")) {
            return ParseResult.failed(
                    "a batch of entries ('"
                            + (entry.containsKey("records") ? "records" : "entries")
                            + "' array): one LogEntry a line is read; write each element on a line of its own");
        }
        Object payload = entry.get("protoPayload");
        if (!(payload instanceof Map))
            return ParseResult.failed(
                    "missing required field 'protoPayload' (a Cloud Logging audit entry)");
        Object requestValue = ((Map<?, ?>) payload).get("request");
        if (!(requestValue instanceof Map))
            return ParseResult.failed("missing required field 'protoPayload.request'");
        Map<?, ?> request = (Map<?, ?>) requestValue;
        String type = text(request.get("@type"));
        if (type == null || !(type.equals(ENTRY_TYPE) || type.endsWith("/" + ENTRY_TYPE))) {
            return ParseResult.failed(
                    "protoPayload.request is a '"
                            + clip(String.valueOf(type))
                            + "', not a "
                            + ENTRY_TYPE);
        }
        String cmd = text(request.get("cmd"));
        if (cmd == null || cmd.isEmpty())
            return ParseResult.failed("missing required field 'protoPayload.request.cmd'");
        AuditEvent e = new AuditEvent();
        String time = firstText(text(request.get("date")), text(entry.get("timestamp")));
        if (time == null)
            return ParseResult.failed(
                    "missing required field 'protoPayload.request.date' (or 'timestamp')");
        try {
            e.eventTimeMillis = AuditTimestamps.parseEpochMillis(time, ZoneOffset.UTC);
        } catch (IllegalArgumentException ex) {
            return ParseResult.failed(ex.getMessage());
        }
        String thread = text(request.get("threadId"));
        if (thread != null && !thread.isEmpty()) {
            Long id = AzureMysqlAuditParser.wholeNumber(thread);
            if (id == null)
                return ParseResult.failed(
                        "field 'threadId' is not a number: '" + clip(thread) + "'");
            e.connectionId = id;
        }
        String errCode = text(request.get("errCode"));
        if (errCode != null && !errCode.isEmpty()) {
            Long code = AzureMysqlAuditParser.wholeNumber(errCode);
            if (code == null || code > Integer.MAX_VALUE || code < Integer.MIN_VALUE) {
                return ParseResult.failed(
                        "field 'errCode' is not a number: '" + clip(errCode) + "'");
            }
            e.status = code.intValue();
        }
        String outcome = text(request.get("status"));
        boolean failed =
                (e.status != null && e.status != 0) || "unsuccessful".equalsIgnoreCase(outcome);
        String lower = cmd.toLowerCase(Locale.ROOT);
        switch (lower) {
            case "connect" -> {
                e.eventName = "Connect";
                e.authOutcome = failed ? AuditEvent.AUTH_FAILURE : AuditEvent.AUTH_SUCCESS;
            }
            case "change_user" -> {
                e.eventName = "Change user";
                e.authOutcome = failed ? AuditEvent.AUTH_FAILURE : AuditEvent.AUTH_SUCCESS;
            }
            case "quit", "disconnect" -> e.eventName = "Quit";
            default -> {
                e.eventName = "Query";
                e.commandClass = lower;
            }
        }
        if (failed && e.status == null)
            e.status = 1; // unsuccessful without a code: a failure all the same
        e.user = text(request.get("user"));
        e.privUser = emptyAsNull(text(request.get("privUser")));
        e.host = emptyAsNull(text(request.get("host")));
        e.ip = emptyAsNull(text(request.get("ip")));
        e.db = emptyAsNull(text(request.get("db")));
        e.sqltext = emptyAsNull(text(request.get("query")));
        Object objects = request.get("objects");
        if (objects instanceof List<?> list && !list.isEmpty()) {
            StringBuilder names = new StringBuilder();
            for (Object o : list) {
                if (!(o instanceof Map<?, ?> obj)) continue;
                String db = text(obj.get("db"));
                String name = text(obj.get("name"));
                if (e.db == null && db != null && !db.isEmpty()) e.db = db;
                if (names.length() > 0) names.append(',');
                names.append(db == null || db.isEmpty() ? "" : db + ".")
                        .append(name == null ? "" : name);
            }
            if (names.length() > 0) e.extra.put("objects", names.toString());
        }
        for (Map.Entry<?, ?> x : request.entrySet()) {
            String k = String.valueOf(x.getKey());
            if (!READ.contains(k) && x.getValue() != null) e.extra.put(k, asText(x.getValue()));
        }
        String insertId = text(entry.get("insertId"));
        if (insertId != null) e.extra.put("insert_id", insertId);
        Object resource = entry.get("resource");
        if (resource instanceof Map<?, ?> r && r.get("labels") instanceof Map<?, ?> labels) {
            String instance = text(labels.get("database_id"));
            if (instance != null) e.extra.put("database_id", instance);
        }
        if (splitUid != null) e.extra.put("split_uid", splitUid);
        e.setSource(source);
        if (splitUid != null) {
            e.recordId = splitUid;
        } else if (insertId != null && !insertId.isEmpty()) {
            e.recordId = insertId;
        } else {
            e.recordId = EventIds.contentId(e, record);
        }
        e.id = EventIds.eventId(source.server(), e.recordId);
        return ParseResult.ok(e);
    }

    /** The request's fields read into the event's own places; the rest go to extra. */
    private static final Set<String> READ =
            Set.of(
                    "@type",
                    "cmd",
                    "date",
                    "threadId",
                    "errCode",
                    "status",
                    "user",
                    "privUser",
                    "host",
                    "ip",
                    "db",
                    "query",
                    "objects");

    // ---- split entries
    // ---------------------------------------------------------------------------

    /** An entry's {@code split}: its uid, index and total, or what is wrong with it. */
    static final class Split {
        final String uid;
        final long index;
        final long total;
        final String problem;

        private Split(String uid, long index, long total, String problem) {
            this.uid = uid;
            this.index = index;
            this.total = total;
            this.problem = problem;
        }

        static Split of(Map<String, Object> entry) {
            Object s = entry.get("split");
            if (s == null) return new Split(null, 0, 1, null);
            if (!(s instanceof Map<?, ?> m))
                return new Split(null, 0, 1, "field 'split' is not an object");
            String uid = text(m.get("uid"));
            Long index =
                    m.get("index") == null
                            ? Long.valueOf(0)
                            : AzureMysqlAuditParser.wholeNumber(text(m.get("index")));
            Long total =
                    AzureMysqlAuditParser.wholeNumber(String.valueOf(text(m.get("totalSplits"))));
            if (uid == null || uid.isEmpty())
                return new Split(null, 0, 1, "field 'split' has no 'uid'");
            if (total == null || total < 1 || index == null || index < 0 || index >= total) {
                return new Split(
                        uid,
                        0,
                        1,
                        "field 'split' of "
                                + clip(uid)
                                + " has no valid 'index' and 'totalSplits'");
            }
            return new Split(uid, index, total, null);
        }
    }

    private static String checkParts(List<Map<String, Object>> parts) {
        Split first = Split.of(parts.get(0));
        boolean[] seen = new boolean[parts.size()];
        for (Map<String, Object> p : parts) {
            Split s = Split.of(p);
            if (s.problem != null) return s.problem;
            if (s.uid == null || !s.uid.equals(first.uid)) {
                return "lines of different entries in one record (split.uid "
                        + clip(String.valueOf(first.uid))
                        + " and "
                        + clip(String.valueOf(s.uid))
                        + ")";
            }
            if (s.total != parts.size()) {
                return "split entry "
                        + clip(first.uid)
                        + ": "
                        + parts.size()
                        + " of its "
                        + s.total
                        + " parts";
            }
            if (seen[(int) s.index])
                return "split entry " + clip(first.uid) + ": part " + (s.index + 1) + " twice";
            seen[(int) s.index] = true;
        }
        return null;
    }

    /**
     * The entry the parts (ordered by index) were cut from: part 0's fields, protoPayload's split
     * fields joined.
     */
    private static Map<String, Object> joined(List<Map<String, Object>> parts) {
        Map<String, Object> entry = new LinkedHashMap<>(parts.get(0));
        Map<String, Object> payload = new LinkedHashMap<>();
        for (Map<String, Object> p : parts) {
            if (!(p.get("protoPayload") instanceof Map<?, ?> pp)) continue;
            for (Map.Entry<?, ?> x : pp.entrySet()) {
                String k = String.valueOf(x.getKey());
                if ("request".equals(k) || "metadata".equals(k) || "response".equals(k)) {
                    payload.put(k, merge(payload.get(k), x.getValue()));
                } else {
                    payload.putIfAbsent(k, x.getValue()); // the same in every part
                }
            }
        }
        entry.put("protoPayload", payload);
        return entry;
    }

    /**
     * Two pieces of a split value put together: strings joined, objects field by field (an
     * {@code @type} taken once), lists element by element (a list's element cut in two starts the
     * next part's list, an empty string holding the place of the elements before it), any other
     * value taken where it is.
     */
    @SuppressWarnings("unchecked")
    static Object merge(Object a, Object b) {
        if (a == null) return b;
        if (b == null) return a;
        if (a instanceof String sa && b instanceof String sb) return sa + sb;
        if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
            Map<String, Object> out = new LinkedHashMap<>((Map<String, Object>) ma);
            for (Map.Entry<?, ?> x : mb.entrySet()) {
                String k = String.valueOf(x.getKey());
                // a message's type is named in each part that holds a piece of it, not cut
                out.put(
                        k,
                        "@type".equals(k) && out.get(k) != null
                                ? out.get(k)
                                : merge(out.get(k), x.getValue()));
            }
            return out;
        }
        if (a instanceof List<?> la && b instanceof List<?> lb) {
            List<Object> out = new ArrayList<>(la);
            for (int i = 0; i < lb.size(); i++) {
                Object piece = lb.get(i);
                if (i < out.size()) {
                    out.set(i, isEmptyPlaceholder(piece) ? out.get(i) : merge(out.get(i), piece));
                } else {
                    out.add(piece);
                }
            }
            return out;
        }
        return a;
    }

    private static boolean isEmptyPlaceholder(Object o) {
        return (o instanceof String s && s.isEmpty()) || (o instanceof Map<?, ?> m && m.isEmpty());
    }

    /**
     * Whether a line is one part of a split entry, and which: its {@code split.uid} and {@code
     * totalSplits}, or null (read cheaply: only a line naming {@code "split"} is parsed).
     */
    public static String[] splitOf(String line) {
        if (!line.contains("\"split\"")) return null;
        try (JsonParser p = RecordText.JSON.createParser(line)) {
            Object tree = read(p, p.nextToken(), 0);
            if (!(tree instanceof Map)) return null;
            @SuppressWarnings("unchecked")
            Split s = Split.of((Map<String, Object>) tree);
            if (s.problem != null || s.uid == null || s.total < 2) return null;
            return new String[] {s.uid, Long.toString(s.total)};
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    /**
     * Gathers the parts of split entries among a file's records: each part is held until the others
     * of its uid have come, then the parts are handed out together as one record (their lines
     * joined with LF, in the order they came; the parser orders them by index). Records that are no
     * part pass at once. At most {@code maxHeld} entries and {@code maxChars} characters are held:
     * beyond either, and at the end of the file, the oldest is handed out as it is (its parts
     * together, which the parser then names as incomplete: a dead letter, nothing dropped).
     */
    public static final class SplitParts {
        private final int maxHeld;
        private final long maxChars;
        private final LinkedHashMap<String, Held> held = new LinkedHashMap<>();
        private long chars;

        public SplitParts(int maxHeld, long maxChars) {
            this.maxHeld = maxHeld;
            this.maxChars = maxChars;
        }

        /** A record and the number of its first line. */
        public record Out(String text, long firstLine) {}

        private static final class Held {
            final long total;
            final long firstLine;
            final StringBuilder text = new StringBuilder();
            int parts;

            Held(long total, long firstLine) {
                this.total = total;
                this.firstLine = firstLine;
            }
        }

        /**
         * What can be handed out after {@code record}: itself, an entry it completes, or an entry
         * pushed out.
         */
        public List<Out> add(String record, long firstLine) {
            String[] split = record.indexOf('\n') < 0 ? splitOf(record) : null;
            if (split == null) return List.of(new Out(record, firstLine));
            List<Out> out = new ArrayList<>(2);
            Held h = held.get(split[0]);
            if (h == null) {
                if (held.size() >= maxHeld) out.add(handOut(held.keySet().iterator().next()));
                h = new Held(Long.parseLong(split[1]), firstLine);
                held.put(split[0], h);
            }
            if (h.parts > 0) h.text.append('\n');
            h.text.append(record);
            h.parts++;
            chars += record.length() + 1;
            if (h.parts >= h.total || h.parts >= MAX_PARTS) out.add(handOut(split[0]));
            while (chars > maxChars && !held.isEmpty())
                out.add(handOut(held.keySet().iterator().next()));
            return out;
        }

        /** At the end of the file: every entry still held, incomplete, oldest first. */
        public List<Out> finish() {
            List<Out> out = new ArrayList<>();
            while (!held.isEmpty()) out.add(handOut(held.keySet().iterator().next()));
            return out;
        }

        private Out handOut(String uid) {
            Held h = held.remove(uid);
            chars -= h.text.length() + 1;
            return new Out(h.text.toString(), h.firstLine);
        }
    }

    // ---- a small JSON tree
    // -----------------------------------------------------------------------

    /** A JSON value as maps, lists, strings (numbers as their text), booleans and nulls. */
    private static Object read(JsonParser p, JsonToken t, int depth) throws IOException {
        if (t == null) throw new IOException("no JSON value");
        if (depth > MAX_DEPTH) throw new IOException("nested deeper than " + MAX_DEPTH + " levels");
        switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    m.put(name, read(p, p.nextToken(), depth + 1));
                }
                return m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                JsonToken next;
                while ((next = p.nextToken()) != JsonToken.END_ARRAY)
                    l.add(read(p, next, depth + 1));
                return l;
            }
            case VALUE_STRING -> {
                return p.getText();
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                return p.getText();
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return null;
            }
            default -> throw new IOException("unexpected " + RecordText.describe(t));
        }
    }

    private static String text(Object o) {
        if (o == null) return null;
        if (o instanceof String s) return s;
        if (o instanceof Boolean) return o.toString();
        return null;
    }

    /** A value as text: scalars as they are, lists and objects as compact JSON. */
    private static String asText(Object o) {
        if (o instanceof String s) return s;
        if (o instanceof Boolean) return o.toString();
        StringBuilder b = new StringBuilder();
        json(o, b);
        return b.toString();
    }

    private static void json(Object o, StringBuilder b) {
        if (o == null) {
            b.append("null");
        } else if (o instanceof String s) {
            JsonEscape.quote(s, b);
        } else if (o instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> x : m.entrySet()) {
                if (!first) b.append(',');
                first = false;
                json(String.valueOf(x.getKey()), b);
                b.append(':');
                json(x.getValue(), b);
            }
            b.append('}');
        } else if (o instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) b.append(',');
                json(l.get(i), b);
            }
            b.append(']');
        } else {
            b.append(o);
        }
    }

    private static String firstText(String... values) {
        for (String v : values) if (v != null && !v.isEmpty()) return v;
        return null;
    }

    private static String emptyAsNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
