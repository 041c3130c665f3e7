package io.auditpipe.enrich;

import io.auditpipe.parser.AuditEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The compliance controls an event evidences, from the one mapping table
 * (schemas/compliance-controls.csv, in the jar as {@value #RESOURCE}; docs/compliance.md shows it).
 *
 * <p>Each row: {@code control,framework,requirement,when}. {@code when} is clauses joined by {@code
 * &}, all of which must hold; a clause is {@code key=value|value...}, one of whose values (a {@link
 * Glob}) must match. Keys: {@code category}, {@code action}, {@code data_class} (any of the
 * event's), {@code principal_class}, {@code outcome}, {@code status}. A control with several rows
 * is evidenced when any row matches.
 */
public final class ControlTags implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String RESOURCE = "/io/auditpipe/enrich/compliance-controls.csv";
    static final List<String> KEYS =
            List.of("category", "action", "data_class", "principal_class", "outcome", "status");

    /** One row of the table. */
    public record Row(
            String control, String framework, String requirement, Map<String, List<Glob>> when)
            implements Serializable {}

    private final List<Row> rows;

    public ControlTags(List<Row> rows) {
        this.rows = rows;
    }

    public List<Row> rows() {
        return rows;
    }

    public static ControlTags load() {
        try (InputStream in = ControlTags.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException(RESOURCE + " is missing from the jar");
            return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + RESOURCE, e);
        }
    }

    public static ControlTags parse(String csv) {
        List<Row> rows = new ArrayList<>();
        int lineNumber = 0;
        try (BufferedReader r = new BufferedReader(new java.io.StringReader(csv))) {
            String line;
            while ((line = r.readLine()) != null) {
                lineNumber++;
                if (lineNumber == 1 || line.isBlank()) continue;
                List<String> cells = cells(line);
                if (cells.size() != 4) {
                    throw new IllegalArgumentException(
                            "compliance-controls.csv line "
                                    + lineNumber
                                    + ": 4 columns expected, got "
                                    + cells.size());
                }
                rows.add(
                        new Row(
                                cells.get(0),
                                cells.get(1),
                                cells.get(2),
                                conditions(cells.get(3), lineNumber)));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return new ControlTags(rows);
    }

    private static Map<String, List<Glob>> conditions(String when, int lineNumber) {
        Map<String, List<Glob>> out = new LinkedHashMap<>();
        for (String clause : when.split("&")) {
            String[] kv = clause.trim().split("=", 2);
            if (kv.length != 2 || !KEYS.contains(kv[0].trim())) {
                throw new IllegalArgumentException(
                        "compliance-controls.csv line "
                                + lineNumber
                                + ": '"
                                + clause.trim()
                                + "' is not key=value|value with a key of "
                                + KEYS);
            }
            List<Glob> values = new ArrayList<>();
            for (String v : kv[1].split("\\|")) values.add(new Glob(v.trim()));
            out.put(kv[0].trim(), values);
        }
        return out;
    }

    /** CSV cells: comma-separated, a cell in double quotes may hold commas ("" is a quote). */
    static List<String> cells(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cell.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cell.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(cell.toString());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        out.add(cell.toString());
        return out;
    }

    /**
     * The controls the (classified) event evidences, sorted. They depend on six fields with few
     * values between them, so each combination's answer is remembered (matching the table's globs
     * for every event was 5-6% of the job alone's samples, profiled 2026-11-24); past {@link
     * #MAX_REMEMBERED} combinations the memory starts again.
     */
    public List<String> controlsOf(AuditEvent e) {
        Map<Subject, List<String>> memory = remembered;
        if (memory == null) remembered = memory = new ConcurrentHashMap<>();
        Subject subject =
                new Subject(
                        e.category,
                        e.action,
                        e.dataClasses,
                        e.principalClass,
                        e.outcome(),
                        e.status);
        List<String> controls = memory.get(subject);
        if (controls == null) {
            controls = List.copyOf(evaluate(e));
            if (memory.size() >= MAX_REMEMBERED) memory.clear();
            memory.put(
                    new Subject(
                            e.category,
                            e.action,
                            e.dataClasses == null ? null : new ArrayList<>(e.dataClasses),
                            e.principalClass,
                            e.outcome(),
                            e.status),
                    controls);
        }
        return new ArrayList<>(controls);
    }

    static final int MAX_REMEMBERED = 4096;
    private transient volatile Map<Subject, List<String>> remembered;

    /** What the table's clauses read of an event. */
    private record Subject(
            String category,
            String action,
            List<String> dataClasses,
            String principalClass,
            String outcome,
            Integer status) {}

    /**
     * The controls the event evidences, read from the table (what {@link #controlsOf} remembers).
     */
    List<String> evaluate(AuditEvent e) {
        TreeSet<String> out = new TreeSet<>();
        for (Row row : rows) {
            if (!out.contains(row.control()) && matches(row, e)) out.add(row.control());
        }
        return new ArrayList<>(out);
    }

    private static boolean matches(Row row, AuditEvent e) {
        for (Map.Entry<String, List<Glob>> c : row.when().entrySet()) {
            boolean any = false;
            switch (c.getKey()) {
                case "data_class" -> {
                    if (e.dataClasses != null) {
                        for (String d : e.dataClasses) any |= anyMatch(c.getValue(), d);
                    }
                }
                case "category" -> any = anyMatch(c.getValue(), e.category);
                case "action" -> any = anyMatch(c.getValue(), e.action);
                case "principal_class" -> any = anyMatch(c.getValue(), e.principalClass);
                case "outcome" -> any = anyMatch(c.getValue(), e.outcome());
                case "status" ->
                        any = e.status != null && anyMatch(c.getValue(), String.valueOf(e.status));
                default -> {}
            }
            if (!any) return false;
        }
        return true;
    }

    private static boolean anyMatch(List<Glob> globs, String value) {
        if (value == null) return false;
        for (Glob g : globs) {
            if (g.matches(value)) return true;
        }
        return false;
    }
}
