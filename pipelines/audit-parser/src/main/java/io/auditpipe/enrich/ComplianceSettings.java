package io.auditpipe.enrich;

import java.io.Serializable;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The compliance part of the job's configuration: data classes and their tables, classes of
 * principals, who may access each data class, what is masked, the change windows. Read from the
 * job's properties under {@code compliance.} (the CLI writes them from the config file's {@code
 * compliance} section; docs/compliance.md is the reference):
 *
 * <pre>
 * compliance.data-class.&lt;class&gt;.tables=shop.cards,billing.*        (class: pci_cardholder, hipaa_ephi, sox_financial)
 * compliance.data-class.&lt;class&gt;.allowed-principals=app,dba_*        (absent: not enforced)
 * compliance.principals.administrators=root,dba_*
 * compliance.principals.service-accounts=app,etl_*
 * compliance.masking.pan=true
 * compliance.masking.pattern.&lt;name&gt;=&lt;regular expression&gt;
 * compliance.change-windows=sat,sun 02:00-06:00 UTC; * 23:00-23:30 Europe/Berlin
 * compliance.business-hours=mon,tue,wed,thu,fri 07:00-19:00 Europe/Berlin
 * compliance.sql-parse-timeout-ms=1000
 * </pre>
 *
 * Patterns are {@link Glob}s, comma-separated. {@link #fromProperties} rejects unknown keys and bad
 * values, naming the key.
 */
public final class ComplianceSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PREFIX = "compliance.";
    public static final String PCI_CARDHOLDER = "pci_cardholder";
    public static final String HIPAA_EPHI = "hipaa_ephi";
    public static final String SOX_FINANCIAL = "sox_financial";
    public static final List<String> DATA_CLASSES =
            List.of(PCI_CARDHOLDER, HIPAA_EPHI, SOX_FINANCIAL);

    private static final String DATA_CLASS = "data-class.";
    private static final String TABLES = "tables";
    private static final String ALLOWED_PRINCIPALS = "allowed-principals";
    private static final String ADMINISTRATORS = "principals.administrators";
    private static final String SERVICE_ACCOUNTS = "principals.service-accounts";
    private static final String MASK_PANS = "masking.pan";
    private static final String MASK_CREDENTIALS = "masking.credentials";
    private static final String MASK_PATTERN = "masking.pattern.";
    private static final String CHANGE_WINDOWS = "change-windows";
    private static final String BUSINESS_HOURS = "business-hours";
    private static final String SQL_PARSE_TIMEOUT = "sql-parse-timeout-ms";

    /**
     * Every key {@link #fromProperties} reads, {@code <class>} standing for a data class and {@code
     * <name>} for a pattern's name, with what it holds (schemas/job-contract.json).
     */
    public static final Map<String, String> KEYS = keys();

    private static Map<String, String> keys() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(
                PREFIX + DATA_CLASS + "<class>." + TABLES,
                "Tables of the data class (db.table globs, comma-separated).");
        m.put(
                PREFIX + DATA_CLASS + "<class>." + ALLOWED_PRINCIPALS,
                "Principals allowed to touch the data class"
                        + " (user or user@host globs); absent: access is not enforced.");
        m.put(PREFIX + ADMINISTRATORS, "Principals that are administrators (globs).");
        m.put(PREFIX + SERVICE_ACCOUNTS, "Principals that are service accounts (globs).");
        m.put(PREFIX + MASK_PANS, "true or false: mask card numbers (PANs that pass Luhn).");
        m.put(
                PREFIX + MASK_CREDENTIALS,
                "true or false: mask the passwords and hashes of account statements.");
        m.put(
                PREFIX + MASK_PATTERN + "<name>",
                "A regular expression whose matches are masked, named in 'masked'.");
        m.put(
                PREFIX + CHANGE_WINDOWS,
                "Weekly change windows, 'DAYS HH:MM-HH:MM ZONE' separated by ';'.");
        m.put(PREFIX + BUSINESS_HOURS, "Weekly business hours, in the form of the change windows.");
        m.put(
                PREFIX + SQL_PARSE_TIMEOUT,
                "Longest time the SQL parser may spend on one statement, in milliseconds (one attempt; then a keyword scan): a safety net, far above what a statement within the parser's bounds takes (docs/compliance.md).");
        return java.util.Collections.unmodifiableMap(m);
    }

    public static final String ADMINISTRATOR = "administrator";
    public static final String SERVICE_ACCOUNT = "service_account";
    public static final String PERSON = "person";

    final Map<String, List<Glob>> tables = new LinkedHashMap<>();

    /** Only the classes whose access is enforced. */
    final Map<String, List<Glob>> allowed = new LinkedHashMap<>();

    final List<Glob> administrators = new ArrayList<>();
    final List<Glob> serviceAccounts = new ArrayList<>();
    final List<ChangeWindow> changeWindows = new ArrayList<>();

    /**
     * Weekly windows of working time (same form as the change windows); empty: after-hours is not
     * judged.
     */
    final List<ChangeWindow> businessHours = new ArrayList<>();

    SensitiveDataMasker masker = new SensitiveDataMasker(true, Map.of());
    long sqlParseTimeoutMillis = 1000;

    /** Nothing classified, PANs masked: what the job does with no compliance configuration. */
    public static ComplianceSettings defaults() {
        return new ComplianceSettings();
    }

    public SensitiveDataMasker masker() {
        return masker;
    }

    public long sqlParseTimeoutMillis() {
        return sqlParseTimeoutMillis;
    }

    public List<ChangeWindow> changeWindows() {
        return changeWindows;
    }

    /**
     * The data classes a table ({@code db.table}) belongs to; a pattern without a dot matches the
     * table in any database.
     */
    public List<String> dataClassesOf(String table) {
        List<String> out = new ArrayList<>(1);
        int dot = table.indexOf('.');
        String bare = dot < 0 ? table : table.substring(dot + 1);
        for (Map.Entry<String, List<Glob>> e : tables.entrySet()) {
            for (Glob g : e.getValue()) {
                boolean qualifiedPattern = g.text().indexOf('.') >= 0;
                if (qualifiedPattern ? g.matches(table) : g.matches(bare)) {
                    out.add(e.getKey());
                    break;
                }
            }
        }
        return out;
    }

    /** administrator, service_account or person; null when the event has no user. */
    public String principalClassOf(String user, String host) {
        if (user == null || user.isEmpty()) return null;
        if (matchesPrincipal(administrators, user, host)) return ADMINISTRATOR;
        if (matchesPrincipal(serviceAccounts, user, host)) return SERVICE_ACCOUNT;
        return PERSON;
    }

    /** False only when the class's access is enforced and the principal is not on its list. */
    public boolean allowed(String dataClass, String user, String host) {
        List<Glob> list = allowed.get(dataClass);
        return list == null || matchesPrincipal(list, user, host);
    }

    public boolean enforced(String dataClass) {
        return allowed.containsKey(dataClass);
    }

    private static boolean matchesPrincipal(List<Glob> globs, String user, String host) {
        for (Glob g : globs) {
            if (g.matches(user) || (host != null && g.matches(user + "@" + host))) return true;
        }
        return false;
    }

    /**
     * True when {@code epochMillis} falls in a change window (always false when none is
     * configured).
     */
    public boolean inChangeWindow(long epochMillis) {
        for (ChangeWindow w : changeWindows) {
            if (w.contains(epochMillis)) return true;
        }
        return false;
    }

    /**
     * Null when no business hours are configured; otherwise true when {@code epochMillis} is
     * outside every window.
     */
    public Boolean afterHours(long epochMillis) {
        if (businessHours.isEmpty()) return null;
        for (ChangeWindow w : businessHours) {
            if (w.contains(epochMillis)) return false;
        }
        return true;
    }

    public List<ChangeWindow> businessHours() {
        return businessHours;
    }

    /**
     * A weekly window of time in a zone: {@code sat,sun 02:00-06:00 UTC}; {@code *} for every day.
     */
    public static final class ChangeWindow implements Serializable {
        private static final long serialVersionUID = 1L;
        final EnumSet<DayOfWeek> days;
        final LocalTime from;
        final LocalTime to;
        final String zone;
        final String text;

        ChangeWindow(
                EnumSet<DayOfWeek> days, LocalTime from, LocalTime to, String zone, String text) {
            this.days = days;
            this.from = from;
            this.to = to;
            this.zone = zone;
            this.text = text;
        }

        static ChangeWindow parse(String text) {
            String[] parts = text.trim().split("\\s+");
            if (parts.length != 3) {
                throw new IllegalArgumentException(
                        "'"
                                + text
                                + "' is not 'DAYS HH:MM-HH:MM ZONE' (e.g. 'sat,sun 02:00-06:00 UTC')");
            }
            EnumSet<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
            if ("*".equals(parts[0])) {
                days = EnumSet.allOf(DayOfWeek.class);
            } else {
                for (String d : parts[0].split(",")) {
                    DayOfWeek day = DAY_NAMES.get(d.toLowerCase(Locale.ROOT));
                    if (day == null)
                        throw new IllegalArgumentException(
                                "'" + d + "' is not a day (mon, tue, ... sun, or *)");
                    days.add(day);
                }
            }
            String[] range = parts[1].split("-");
            if (range.length != 2)
                throw new IllegalArgumentException("'" + parts[1] + "' is not HH:MM-HH:MM");
            LocalTime from, to;
            try {
                from = LocalTime.parse(range[0]);
                to = LocalTime.parse(range[1]);
            } catch (java.time.format.DateTimeParseException e) {
                throw new IllegalArgumentException("'" + parts[1] + "' is not HH:MM-HH:MM");
            }
            try {
                ZoneId.of(parts[2]);
            } catch (java.time.DateTimeException e) {
                throw new IllegalArgumentException("'" + parts[2] + "' is not a time zone");
            }
            return new ChangeWindow(days, from, to, parts[2], text.trim());
        }

        /**
         * Inside when the local day is one of the days and the local time is in [from, to) (a
         * window past midnight belongs to its first day).
         */
        public boolean contains(long epochMillis) {
            ZonedDateTime t = Instant.ofEpochMilli(epochMillis).atZone(ZoneId.of(zone));
            LocalTime time = t.toLocalTime();
            if (!from.isAfter(to)) {
                return days.contains(t.getDayOfWeek()) && !time.isBefore(from) && time.isBefore(to);
            }
            // crosses midnight: from..24:00 on a listed day, 00:00..to on the day after one
            return (days.contains(t.getDayOfWeek()) && !time.isBefore(from))
                    || (days.contains(t.getDayOfWeek().minus(1)) && time.isBefore(to));
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private static final Map<String, DayOfWeek> DAY_NAMES =
            Map.of(
                    "mon",
                    DayOfWeek.MONDAY,
                    "tue",
                    DayOfWeek.TUESDAY,
                    "wed",
                    DayOfWeek.WEDNESDAY,
                    "thu",
                    DayOfWeek.THURSDAY,
                    "fri",
                    DayOfWeek.FRIDAY,
                    "sat",
                    DayOfWeek.SATURDAY,
                    "sun",
                    DayOfWeek.SUNDAY);

    /**
     * Reads the {@code compliance.*} entries of {@code properties} (other keys are ignored).
     *
     * @throws IllegalArgumentException listing every bad key and what is wrong with it
     */
    public static ComplianceSettings fromProperties(Map<String, String> properties) {
        ComplianceSettings s = new ComplianceSettings();
        List<String> problems = new ArrayList<>();
        boolean maskPans = true;
        boolean maskCredentials = true;
        Map<String, String> patterns = new TreeMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(properties).entrySet()) {
            String key = e.getKey();
            if (!key.startsWith(PREFIX)) continue;
            String rest = key.substring(PREFIX.length());
            String value = e.getValue() == null ? "" : e.getValue().trim();
            try {
                if (rest.startsWith(DATA_CLASS)) {
                    String[] p = rest.substring(DATA_CLASS.length()).split("\\.", 2);
                    if (p.length != 2 || !DATA_CLASSES.contains(p[0])) {
                        throw new IllegalArgumentException(
                                "unknown data class (known: " + DATA_CLASSES + ")");
                    }
                    if (TABLES.equals(p[1])) s.tables.put(p[0], globs(value));
                    else if (ALLOWED_PRINCIPALS.equals(p[1])) s.allowed.put(p[0], globs(value));
                    else
                        throw new IllegalArgumentException(
                                "unknown key (a data class has "
                                        + TABLES
                                        + " and "
                                        + ALLOWED_PRINCIPALS
                                        + ")");
                } else if (ADMINISTRATORS.equals(rest)) {
                    s.administrators.addAll(globs(value));
                } else if (SERVICE_ACCOUNTS.equals(rest)) {
                    s.serviceAccounts.addAll(globs(value));
                } else if (MASK_PANS.equals(rest)) {
                    if (!value.equals("true") && !value.equals("false"))
                        throw new IllegalArgumentException("not true or false");
                    maskPans = Boolean.parseBoolean(value);
                } else if (MASK_CREDENTIALS.equals(rest)) {
                    if (!value.equals("true") && !value.equals("false"))
                        throw new IllegalArgumentException("not true or false");
                    maskCredentials = Boolean.parseBoolean(value);
                } else if (rest.startsWith(MASK_PATTERN) && rest.length() > MASK_PATTERN.length()) {
                    String name = rest.substring(MASK_PATTERN.length());
                    new SensitiveDataMasker(
                            false, Map.of(name, value)); // compiles it: names a bad one
                    patterns.put(name, value);
                } else if (CHANGE_WINDOWS.equals(rest)) {
                    for (String w : value.split(";")) {
                        if (!w.isBlank()) s.changeWindows.add(ChangeWindow.parse(w));
                    }
                } else if (BUSINESS_HOURS.equals(rest)) {
                    for (String w : value.split(";")) {
                        if (!w.isBlank()) s.businessHours.add(ChangeWindow.parse(w));
                    }
                } else if (SQL_PARSE_TIMEOUT.equals(rest)) {
                    s.sqlParseTimeoutMillis = Long.parseLong(value);
                    if (s.sqlParseTimeoutMillis <= 0)
                        throw new IllegalArgumentException("must be positive");
                } else {
                    throw new IllegalArgumentException(
                            "unknown key (known: " + String.join(", ", KEYS.keySet()) + ")");
                }
            } catch (IllegalArgumentException ex) {
                problems.add("option '" + key + "': " + ex.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("\n  - ", problems));
        }
        s.masker = new SensitiveDataMasker(maskPans, maskCredentials, patterns);
        return s;
    }

    private static List<Glob> globs(String value) {
        List<Glob> out = new ArrayList<>();
        for (String p : value.split(",")) {
            if (!p.isBlank()) out.add(new Glob(p));
        }
        return out;
    }

    /** Enforced data classes: for documentation and tests. */
    public Set<String> enforcedClasses() {
        return allowed.keySet();
    }

    public Duration sqlParseTimeout() {
        return Duration.ofMillis(sqlParseTimeoutMillis);
    }
}
