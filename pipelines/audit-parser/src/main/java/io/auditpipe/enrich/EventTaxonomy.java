package io.auditpipe.enrich;

import io.auditpipe.parser.AuditEvent;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What an event is, in the terms of a compliance review (docs/compliance.md, "Taxonomy"): a {@code
 * category} and a more precise {@code action}.
 *
 * <p>Decided in this order, first match wins:
 *
 * <ol>
 *   <li>the audit system's own records (Percona {@code Audit}/{@code NoAudit}, MySQL Enterprise
 *       class {@code audit}, McAfee's header);
 *   <li>authentication: every event with a login outcome, and the end of a session;
 *   <li>table events that name their table (MariaDB's READ/WRITE/CREATE/ALTER/DROP/RENAME, MySQL
 *       Enterprise's table_access);
 *   <li>the statement: its first words ({@link StatementWords}) from the SQL text, or from the
 *       command class (MySQL's statement name, {@code create_user}) when there is no text;
 *   <li>the command the server ran without a statement (Percona's {@code Shutdown}, {@code Kill},
 *       {@code Init DB} ...).
 * </ol>
 *
 * Anything else is {@code other}. Statements on the audit system itself (installing or removing the
 * audit plugin, audit variables, the audit_log_filter functions and tables) are {@code
 * audit_system}, whatever their statement kind.
 */
public final class EventTaxonomy {
    private EventTaxonomy() {}

    public static final String AUTHENTICATION = "authentication";
    public static final String ACCOUNT_MANAGEMENT = "account_management";
    public static final String SCHEMA_CHANGE = "schema_change";
    public static final String DATA_READ = "data_read";
    public static final String DATA_WRITE = "data_write";
    public static final String ADMINISTRATION = "administration";
    public static final String AUDIT_SYSTEM = "audit_system";
    public static final String SESSION = "session";
    public static final String OTHER = "other";

    /** Every category, in the order of the docs. */
    public static final List<String> CATEGORIES =
            List.of(
                    AUTHENTICATION,
                    ACCOUNT_MANAGEMENT,
                    SCHEMA_CHANGE,
                    DATA_READ,
                    DATA_WRITE,
                    ADMINISTRATION,
                    AUDIT_SYSTEM,
                    SESSION,
                    OTHER);

    /** Actions of the audit system that mean the audit trail stops or loses its coverage. */
    /** The action of the audit plugin's start record (the record-gap rule's restart). */
    public static final String AUDIT_START = "audit_start";

    public static final Set<String> AUDIT_STOPPED =
            Set.of("audit_stop", "audit_disabled", "audit_plugin_removed");

    /** A category and an action. */
    public record Kind(String category, String action) {}

    private static final Set<String> DDL_OBJECTS =
            Set.of(
                    "TABLE",
                    "DATABASE",
                    "SCHEMA",
                    "INDEX",
                    "VIEW",
                    "PROCEDURE",
                    "FUNCTION",
                    "TRIGGER",
                    "EVENT",
                    "TABLESPACE",
                    "SEQUENCE",
                    "PACKAGE",
                    "LOGFILE",
                    "SPATIAL");
    private static final Set<String> ACCOUNT_OBJECTS = Set.of("USER", "ROLE");
    private static final Set<String> SESSION_WORDS =
            Set.of(
                    "USE",
                    "SHOW",
                    "BEGIN",
                    "COMMIT",
                    "ROLLBACK",
                    "SAVEPOINT",
                    "RELEASE",
                    "DESCRIBE",
                    "DESC",
                    "EXPLAIN",
                    "PREPARE",
                    "EXECUTE",
                    "DEALLOCATE",
                    "DO",
                    "HELP",
                    "XA",
                    "LOCK",
                    "UNLOCK",
                    "SET",
                    "CHANGE_DB",
                    "BEGIN_WORK");
    private static final Set<String> ADMIN_WORDS =
            Set.of(
                    "KILL",
                    "SHUTDOWN",
                    "RESTART",
                    "FLUSH",
                    "PURGE",
                    "RESET",
                    "CLONE",
                    "OPTIMIZE",
                    "ANALYZE",
                    "REPAIR",
                    "CHECK",
                    "CHECKSUM",
                    "CACHE",
                    "BINLOG",
                    "STOP",
                    "START");
    private static final Set<String> AUDIT_FUNCTIONS_READ =
            Set.of("AUDIT_LOG_READ", "AUDIT_LOG_READ_BOOKMARK");

    private static final int HEAD = 2048;

    public static Kind classify(AuditEvent e) {
        String name = e.eventName == null ? "" : e.eventName;
        String lower = name.toLowerCase(Locale.ROOT);
        String recordClass = e.extra == null ? null : e.extra.get("class");

        // 1. the audit system's own records
        // (Percona's audit_log_filter begins a file with a record of class audit and no event)
        if ("Audit".equals(name)
                || ("audit".equals(recordClass)
                        && ("startup".equals(lower) || "audit".equals(lower)))
                || (e.extra != null && "header".equals(e.extra.get("msg-type")))) {
            return new Kind(AUDIT_SYSTEM, AUDIT_START);
        }
        if ("NoAudit".equals(name)
                || ("audit".equals(recordClass)
                        && ("shutdown".equals(lower) || "noaudit".equals(lower)))) {
            return new Kind(AUDIT_SYSTEM, "audit_stop");
        }
        // 2. authentication
        if (e.authOutcome != null) {
            if (lower.contains("change")) return new Kind(AUTHENTICATION, "change_user");
            return new Kind(AUTHENTICATION, e.isFailedLogin() ? "login_failed" : "login");
        }
        if ("quit".equals(lower) || "disconnect".equals(lower))
            return new Kind(AUTHENTICATION, "logout");
        if ("connection".equals(recordClass))
            return new Kind(AUTHENTICATION, lower.isEmpty() ? "connection" : lower);
        // 3. table events
        if (e.sqltext == null
                && e.extra != null
                && (e.extra.containsKey("object") || "table_access".equals(recordClass))) {
            switch (lower) {
                case "read" -> {
                    return new Kind(DATA_READ, "read");
                }
                case "write", "insert", "update", "delete" -> {
                    return new Kind(DATA_WRITE, lower);
                }
                case "create", "alter", "drop", "rename" -> {
                    return new Kind(SCHEMA_CHANGE, lower + "_table");
                }
                default -> {}
            }
        }
        // 4. the statement
        List<String> words;
        if (e.sqltext != null && !e.sqltext.isBlank()) {
            words = StatementWords.first(e.sqltext, 6);
        } else if (e.commandClass != null && !e.commandClass.isBlank()) {
            words = List.of(e.commandClass.toUpperCase(Locale.ROOT).split("_"));
        } else {
            words = List.of();
        }
        if (!words.isEmpty()) {
            Kind k = statement(words, e.sqltext);
            if (k != null) return k;
        }
        // 5. a command without a statement
        switch (lower) {
            case "shutdown" -> {
                return new Kind(ADMINISTRATION, "shutdown");
            }
            case "kill" -> {
                return new Kind(ADMINISTRATION, "kill");
            }
            case "refresh" -> {
                return new Kind(ADMINISTRATION, "flush");
            }
            case "init db" -> {
                return new Kind(SESSION, "use");
            }
            default -> {}
        }
        if (words.isEmpty() && e.sqltext == null && !"query".equals(lower)) {
            return new Kind(SESSION, lower.isEmpty() ? "command" : lower.replace(' ', '_'));
        }
        return new Kind(
                OTHER,
                words.isEmpty()
                        ? (lower.isEmpty() ? "unknown" : lower.replace(' ', '_'))
                        : words.get(0).toLowerCase(Locale.ROOT));
    }

    private static String word(List<String> w, int i) {
        return i < w.size() ? w.get(i) : "";
    }

    private static Kind statement(List<String> w, String sql) {
        String first = w.get(0);
        String second = word(w, 1);
        // the head of the statement is where its audit variables, functions and tables are named
        String upper =
                sql == null
                        ? String.join(" ", w)
                        : sql.substring(0, Math.min(sql.length(), HEAD)).toUpperCase(Locale.ROOT);
        // the audit system, whatever the statement kind
        if (("INSTALL".equals(first) || "UNINSTALL".equals(first)) && upper.contains("AUDIT")) {
            return new Kind(
                    AUDIT_SYSTEM,
                    "INSTALL".equals(first) ? "audit_plugin_installed" : "audit_plugin_removed");
        }
        if ("SET".equals(first)
                && (upper.contains("AUDIT_LOG") || upper.contains("SERVER_AUDIT"))) {
            return new Kind(AUDIT_SYSTEM, auditVariableChange(upper));
        }
        if (("SELECT".equals(first) || "DO".equals(first) || "CALL".equals(first))
                && upper.contains("AUDIT_LOG")) {
            if (AUDIT_FUNCTIONS_READ.contains(second))
                return new Kind(AUDIT_SYSTEM, "audit_log_read");
            if (second.startsWith("AUDIT_LOG_FILTER")
                    || second.startsWith("AUDIT_LOG_ENCRYPTION")
                    || "AUDIT_LOG_ROTATE".equals(second)) {
                return new Kind(AUDIT_SYSTEM, "audit_config");
            }
        }
        if (upper.contains("AUDIT_LOG_FILTER") || upper.contains("AUDIT_LOG_USER")) {
            // the filter tables in the mysql schema: a write to them changes what is audited
            if (Set.of("INSERT", "UPDATE", "DELETE", "REPLACE", "TRUNCATE", "DROP", "ALTER")
                    .contains(first)) {
                return new Kind(AUDIT_SYSTEM, "audit_config");
            }
            if ("SELECT".equals(first)) return new Kind(AUDIT_SYSTEM, "audit_log_read");
        }
        switch (first) {
            case "SELECT", "WITH", "TABLE", "VALUES", "HANDLER" -> {
                return new Kind(DATA_READ, "select");
            }
            case "INSERT", "UPDATE", "DELETE", "REPLACE" -> {
                return new Kind(DATA_WRITE, first.toLowerCase(Locale.ROOT));
            }
            case "LOAD" -> {
                if ("DATA".equals(second) || "XML".equals(second))
                    return new Kind(DATA_WRITE, "load_data");
                return new Kind(ADMINISTRATION, "load_index");
            }
            case "CALL" -> {
                return new Kind(OTHER, "call");
            }
            case "GRANT", "REVOKE" -> {
                return new Kind(ACCOUNT_MANAGEMENT, first.toLowerCase(Locale.ROOT));
            }
            case "TRUNCATE" -> {
                return new Kind(SCHEMA_CHANGE, "truncate_table");
            }
            case "INSTALL", "UNINSTALL" -> {
                return new Kind(
                        ADMINISTRATION,
                        first.toLowerCase(Locale.ROOT) + "_" + second.toLowerCase(Locale.ROOT));
            }
            case "CHANGE" -> {
                return new Kind(ADMINISTRATION, "change_replication_source");
            }
            default -> {}
        }
        if ("CREATE".equals(first)
                || "ALTER".equals(first)
                || "DROP".equals(first)
                || "RENAME".equals(first)) {
            String verb = first.toLowerCase(Locale.ROOT);
            // the object may come after clauses the word reader stops at (DEFINER=`u`@`h`,
            // ALGORITHM=...)
            String[] head = upper.substring(0, Math.min(upper.length(), 300)).split("[^A-Z0-9_]+");
            for (int i = 1; i < head.length; i++) {
                String obj = head[i];
                if (ACCOUNT_OBJECTS.contains(obj))
                    return new Kind(ACCOUNT_MANAGEMENT, verb + "_" + obj.toLowerCase(Locale.ROOT));
                if (DDL_OBJECTS.contains(obj)) {
                    String o = "SCHEMA".equals(obj) ? "database" : obj.toLowerCase(Locale.ROOT);
                    return new Kind(SCHEMA_CHANGE, verb + "_" + o);
                }
                if ("SERVER".equals(obj) || "INSTANCE".equals(obj) || "RESOURCE".equals(obj)) {
                    return new Kind(ADMINISTRATION, verb + "_" + obj.toLowerCase(Locale.ROOT));
                }
            }
            return new Kind(SCHEMA_CHANGE, verb);
        }
        if ("SET".equals(first)) {
            if ("PASSWORD".equals(second)) return new Kind(ACCOUNT_MANAGEMENT, "set_password");
            if ("DEFAULT".equals(second) && "ROLE".equals(word(w, 2)))
                return new Kind(ACCOUNT_MANAGEMENT, "set_default_role");
            if ("GLOBAL".equals(second)
                    || "PERSIST".equals(second)
                    || "PERSIST_ONLY".equals(second)
                    || second.startsWith("@@GLOBAL")
                    || second.startsWith("@@PERSIST")
                    // command class set_option: a SET whose scope the name does not say
                    || "OPTION".equals(second)) {
                return "OPTION".equals(second)
                        ? new Kind(SESSION, "set")
                        : new Kind(ADMINISTRATION, "set_global");
            }
            return new Kind(SESSION, "set");
        }
        if (ADMIN_WORDS.contains(first)) {
            if ("START".equals(first) && "TRANSACTION".equals(second))
                return new Kind(SESSION, "start_transaction");
            if ("CHECK".equals(first)
                    || "CHECKSUM".equals(first)
                    || "OPTIMIZE".equals(first)
                    || "ANALYZE".equals(first)
                    || "REPAIR".equals(first)) {
                return new Kind(ADMINISTRATION, first.toLowerCase(Locale.ROOT) + "_table");
            }
            return new Kind(
                    ADMINISTRATION,
                    first.toLowerCase(Locale.ROOT)
                            + (("START".equals(first) || "STOP".equals(first)) && !second.isEmpty()
                                    ? "_" + second.toLowerCase(Locale.ROOT)
                                    : ""));
        }
        if (SESSION_WORDS.contains(first)) {
            return new Kind(SESSION, first.toLowerCase(Locale.ROOT));
        }
        return null;
    }

    /** What a SET of an audit variable does: stops the audit trail, or reconfigures it. */
    private static String auditVariableChange(String upper) {
        String s = upper.replaceAll("\\s+", "");
        if (s.matches(".*SERVER_AUDIT_LOGGING=(OFF|0|FALSE|'OFF').*")
                || s.matches(".*AUDIT_LOG_DISABLE=(ON|1|TRUE|'ON').*")
                || s.matches(".*AUDIT_LOG_POLICY=('?NONE'?).*")) {
            return "audit_disabled";
        }
        if (s.matches(".*SERVER_AUDIT_LOGGING=(ON|1|TRUE|'ON').*")
                || s.matches(".*AUDIT_LOG_DISABLE=(OFF|0|FALSE|'OFF').*")) {
            return "audit_enabled";
        }
        return "audit_config";
    }
}
