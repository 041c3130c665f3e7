package io.auditpipe.enrich;

import io.auditpipe.parser.AuditEvent;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Turns a parsed event into what a compliance review reads (docs/compliance.md): masks sensitive
 * data, then adds the category and action ({@link EventTaxonomy}), the tables touched ({@link
 * SqlTables}), their data classes, the principal's class, access by principals not allowed for a
 * class, whether a schema change is inside a change window, whether access to classified data is
 * after hours, and the controls evidenced ({@link ControlTags}).
 *
 * <p>The Flink job and {@code auditpipe parse --enrich} both call {@link #enrich}; nothing else
 * decides what an event means. Deterministic: the same event and settings give the same result. Not
 * thread-safe (one per operator instance); {@link #close} stops the SQL parser's thread.
 */
public final class Enricher implements Serializable, AutoCloseable {
    private static final long serialVersionUID = 1L;

    private final ComplianceSettings settings;
    private final ControlTags controls;
    private transient SqlTables sqlTables;

    public Enricher(ComplianceSettings settings) {
        this(settings, ControlTags.load());
    }

    public Enricher(ComplianceSettings settings, ControlTags controls) {
        this.settings = settings;
        this.controls = controls;
    }

    public ComplianceSettings settings() {
        return settings;
    }

    public SensitiveDataMasker masker() {
        return settings.masker();
    }

    /** Enriches {@code e} in place (and returns it). */
    public AuditEvent enrich(AuditEvent e) {
        EventTaxonomy.Kind kind = EventTaxonomy.classify(e);
        e.category = kind.category();
        e.action = kind.action();

        // tables from the statement as written (a masked literal may no longer parse)
        TreeSet<String> tables = new TreeSet<>();
        String tablesError = null;
        if (needsTables(e.category) && e.sqltext != null && !e.sqltext.isBlank()) {
            SqlTables.Result r = sqlTables().tablesOf(e.sqltext, e.db);
            tables.addAll(r.tables());
            tablesError = r.error();
        }
        if (e.extra != null) {
            String object = e.extra.get("object"); // MariaDB table events: db.table
            if (object != null && e.sqltext == null && !object.isEmpty()) {
                // a RENAME names the old table and the new one: old|new
                for (String t :
                        "RENAME".equals(e.eventName)
                                ? object.split("\\|")
                                : new String[] {object}) {
                    if (!t.isEmpty()) tables.add(SqlTables.qualified(t, e.db));
                }
            }
            String table = e.extra.get("table"); // MySQL Enterprise table_access
            if (table != null && !table.isEmpty()) tables.add(SqlTables.qualified(table, e.db));
        }

        // masking: the statement, the record's other fields, and a parse error (it may quote a
        // literal)
        TreeSet<String> masked = new TreeSet<>();
        SensitiveDataMasker masker = settings.masker();
        SensitiveDataMasker.Masked sql = masker.mask(e.sqltext);
        if (sql.changed()) {
            e.sqltext = sql.text();
            masked.addAll(sql.found());
        }
        if (e.extra != null) {
            for (Map.Entry<String, String> x : e.extra.entrySet()) {
                SensitiveDataMasker.Masked m = masker.mask(x.getValue());
                if (m.changed()) {
                    x.setValue(m.text());
                    masked.addAll(m.found());
                }
            }
        }
        if (tablesError != null) {
            SensitiveDataMasker.Masked m = masker.mask(tablesError);
            tablesError = m.text();
        }
        // a table's name is the statement's text too (a card number used as a name)
        TreeSet<String> maskedTables = new TreeSet<>();
        for (String t : tables) {
            SensitiveDataMasker.Masked m = masker.mask(t);
            maskedTables.add(m.text());
            masked.addAll(m.found());
        }
        tables = maskedTables;
        e.tables = new ArrayList<>(tables);
        e.tablesError = tablesError;
        e.masked = masked.isEmpty() ? null : new ArrayList<>(masked);

        TreeSet<String> classes = new TreeSet<>();
        for (String t : tables) classes.addAll(settings.dataClassesOf(t));
        e.dataClasses = new ArrayList<>(classes);
        e.principalClass = settings.principalClassOf(e.user, e.host);
        List<String> violations = new ArrayList<>();
        if (e.user != null) {
            for (String c : classes) {
                if (!settings.allowed(c, e.user, e.host)) violations.add(c);
            }
        }
        e.accessViolations = violations;
        // the time-of-day questions FerretDB cannot ask in a query (no $hour): answered here, once
        e.inChangeWindow =
                EventTaxonomy.SCHEMA_CHANGE.equals(e.category)
                        ? settings.inChangeWindow(e.eventTimeMillis)
                        : null;
        e.afterHours = classes.isEmpty() ? null : settings.afterHours(e.eventTimeMillis);
        e.controls = controls.controlsOf(e);
        return e;
    }

    /** The record as written, masked like the event: what the store keeps as {@code original}. */
    public SensitiveDataMasker.Masked maskOriginal(String original) {
        return settings.masker().mask(original);
    }

    private static boolean needsTables(String category) {
        return EventTaxonomy.DATA_READ.equals(category)
                || EventTaxonomy.DATA_WRITE.equals(category)
                || EventTaxonomy.SCHEMA_CHANGE.equals(category)
                || EventTaxonomy.OTHER.equals(category)
                || EventTaxonomy.AUDIT_SYSTEM.equals(category);
    }

    private SqlTables sqlTables() {
        if (sqlTables == null) sqlTables = new SqlTables(settings.sqlParseTimeoutMillis());
        return sqlTables;
    }

    @Override
    public void close() {
        if (sqlTables != null) {
            sqlTables.close();
            sqlTables = null;
        }
    }
}
