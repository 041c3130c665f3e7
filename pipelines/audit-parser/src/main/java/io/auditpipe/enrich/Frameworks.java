package io.auditpipe.enrich;

import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The requirements of every framework a control tag or an alert rule serves (docs/compliance.md
 * "Frameworks"): schemas/framework-map.csv (subject, framework, ids joined by {@code |}) and
 * schemas/framework-requirements.csv (framework, id, requirement), in the jar beside
 * compliance-controls.csv. An alert rule serves what its controls serve and what its own rows add;
 * its alerts carry the result ({@code frameworks}), the frameworks and each one's ids in the order
 * of the requirements table. The CLI reads the same files (auditpipe.evidence.frameworks) and its
 * tests check the alerts the job stored against its own answer.
 */
public final class Frameworks implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String MAP_RESOURCE = "/io/auditpipe/enrich/framework-map.csv";
    public static final String REQUIREMENTS_RESOURCE =
            "/io/auditpipe/enrich/framework-requirements.csv";

    /** framework -> its ids, in the requirements table's order. */
    private final Map<String, List<String>> order;

    /** subject -> framework -> ids. */
    private final Map<String, Map<String, List<String>>> map;

    Frameworks(Map<String, List<String>> order, Map<String, Map<String, List<String>>> map) {
        this.order = order;
        this.map = map;
    }

    private static volatile Frameworks shared;

    /** The tables in the jar, read once. */
    public static Frameworks shared() {
        Frameworks f = shared;
        if (f == null) shared = f = parse(resource(REQUIREMENTS_RESOURCE), resource(MAP_RESOURCE));
        return f;
    }

    private static String resource(String name) {
        try (InputStream in = Frameworks.class.getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException(name + " is missing from the jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + name, e);
        }
    }

    public static Frameworks parse(String requirementsCsv, String mapCsv) {
        Map<String, List<String>> order = new LinkedHashMap<>();
        for (List<String> cells : rows(requirementsCsv, "framework-requirements.csv", 3)) {
            order.computeIfAbsent(cells.get(0), k -> new ArrayList<>()).add(cells.get(1));
        }
        Map<String, Map<String, List<String>>> map = new LinkedHashMap<>();
        for (List<String> cells : rows(mapCsv, "framework-map.csv", 3)) {
            List<String> ids = List.of(cells.get(2).split("\\|"));
            List<String> known = order.get(cells.get(1));
            for (String id : ids) {
                if (known == null || !known.contains(id)) {
                    throw new IllegalArgumentException(
                            "framework-map.csv: "
                                    + cells.get(0)
                                    + " -> "
                                    + cells.get(1)
                                    + " "
                                    + id
                                    + " is not in framework-requirements.csv");
                }
            }
            map.computeIfAbsent(cells.get(0), k -> new LinkedHashMap<>()).put(cells.get(1), ids);
        }
        return new Frameworks(order, map);
    }

    private static List<List<String>> rows(String csv, String name, int columns) {
        List<List<String>> out = new ArrayList<>();
        String[] lines = csv.split("\n");
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].isBlank()) continue;
            List<String> cells = ControlTags.cells(lines[i].strip());
            if (cells.size() != columns) {
                throw new IllegalArgumentException(
                        name
                                + " line "
                                + (i + 1)
                                + ": "
                                + columns
                                + " columns expected, got "
                                + cells.size());
            }
            out.add(cells);
        }
        return out;
    }

    /**
     * What {@code subject} (an alert rule) serves together with its {@code controls}: framework ->
     * ids, the frameworks and the ids in the requirements table's order.
     */
    public Map<String, List<String>> of(String subject, Collection<String> controls) {
        Map<String, Set<String>> merged = new LinkedHashMap<>();
        List<String> subjects = new ArrayList<>();
        subjects.add(subject);
        subjects.addAll(controls);
        for (String s : subjects) {
            for (Map.Entry<String, List<String>> e : map.getOrDefault(s, Map.of()).entrySet()) {
                merged.computeIfAbsent(e.getKey(), k -> new LinkedHashSet<>()).addAll(e.getValue());
            }
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> fw : order.entrySet()) {
            Set<String> ids = merged.get(fw.getKey());
            if (ids == null) continue;
            List<String> sorted = new ArrayList<>();
            for (String id : fw.getValue()) if (ids.contains(id)) sorted.add(id);
            out.put(fw.getKey(), sorted);
        }
        return out;
    }
}
