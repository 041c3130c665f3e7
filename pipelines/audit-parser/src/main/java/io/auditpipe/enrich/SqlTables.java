package io.auditpipe.enrich;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.logging.Level;
import java.util.logging.Logger;
import net.sf.jsqlparser.JSQLParserException;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.util.TablesNamesFinder;

/**
 * The tables a statement touches, read from its SQL text with a real SQL parser (JSqlParser, with
 * MySQL's backslash escapes in strings). Names come out as {@code db.table}, lower case, without
 * quotes; a name without a database takes the event's current database ({@code db}) when the record
 * has one.
 *
 * <p>A statement that does not parse is not an error of the event: the result carries no tables and
 * the reason ({@code tables_error} in the store), so a reviewer sees that the tables of that
 * statement are unknown rather than that it touched none. What a database user's statement can cost
 * is bounded, for it is hostile input (a few hundred characters of nested CASE expressions take
 * JSqlParser seconds), and bounded by the statement alone, never by the clock: the result is part
 * of the event's chained content, so a replay after a failure must enrich every event exactly as
 * the first run did, however busy the machine. So a statement is not parsed when it is longer than
 * {@link #MAX_SQL_CHARS}, nests CASE expressions deeper than {@link #MAX_CASE_DEPTH} or parentheses
 * deeper than {@link #MAX_PAREN_DEPTH} (JSqlParser's time grows about fourfold with every two
 * levels of nested CASE: 2.4 ms at 6, 0.5 s at 14; and with the parentheses' depth: 9 ms at 20, 83
 * ms at 80; measured 2026-11-26 in its simple mode); its tables are then found by the keyword scan,
 * and the result says why. A statement within those bounds gets one attempt, in JSqlParser's simple
 * mode (its default would try again in complex mode, which is what makes some statements take
 * seconds), on a thread of its own that a timeout abandons: a safety net for a construct the bounds
 * do not foresee, far above what a statement within them takes.
 *
 * <p>What is parsed is the statement's shape ({@link #shape}: every literal replaced by {@code ?}),
 * and shapes are cached: applications send the same few shapes with different values, and
 * JSqlParser takes a tenth of a millisecond or more per statement. The shape also keeps literals
 * (card numbers among them) out of parse errors.
 *
 * <p>Not thread-safe; one instance per operator thread (it owns one parser thread).
 */
public final class SqlTables implements AutoCloseable {
    public static final int MAX_SQL_CHARS = 64 * 1024;

    static {
        // JSqlParser logs each retry of a failed parse at INFO; the reason is kept with the event
        // instead
        Logger.getLogger(CCJSqlParserUtil.class.getName()).setLevel(Level.WARNING);
    }

    /**
     * The tables, or why they are unknown (then {@code tables} is empty and {@code error} says
     * why).
     */
    public record Result(List<String> tables, String error) {
        static Result of(List<String> tables) {
            return new Result(tables, null);
        }

        static Result failed(String reason) {
            return new Result(List.of(), reason);
        }
    }

    /** Shapes remembered, least recently used first out. */
    static final int CACHE_SHAPES = 4096;

    /** The deepest nesting of CASE expressions a parsed statement may have. */
    static final int MAX_CASE_DEPTH = 6;

    /** The deepest nesting of parentheses a parsed statement may have. */
    static final int MAX_PAREN_DEPTH = 32;

    private final long timeoutMillis;
    private ExecutorService parserThread;
    private final java.util.LinkedHashMap<String, Result> byShape =
            new java.util.LinkedHashMap<>(256, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(java.util.Map.Entry<String, Result> eldest) {
                    return size() > CACHE_SHAPES;
                }
            };

    public SqlTables(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    public Result tablesOf(String sql, String defaultDb) {
        if (sql == null || sql.isBlank()) return Result.of(List.of());
        if (sql.length() > MAX_SQL_CHARS) {
            return Result.failed(
                    "statement of "
                            + sql.length()
                            + " characters is longer than "
                            + MAX_SQL_CHARS
                            + ": its tables were not parsed");
        }
        // DML by its shape (cached); DDL as written: a parameter marker may not stand in it
        // (DEFAULT '0')
        List<String> head = StatementWords.first(sql, 1);
        boolean dml = !head.isEmpty() && DML.contains(head.get(0));
        Result names;
        if (dml) {
            String shape = shape(sql);
            names = byShape.get(shape);
            if (names == null) {
                names = parse(shape);
                byShape.put(shape, names);
            }
        } else {
            names = parse(sql);
        }
        if (names.error() != null) {
            // a statement cut short by the server (MariaDB logs at most
            // server_audit_query_log_limit bytes) or beyond the parser: the names after FROM, INTO,
            // UPDATE, JOIN, TABLE, and ON of a CREATE INDEX, said to be a scan's
            List<String> scanned = keywordScan(sql);
            if (scanned.isEmpty()) return names;
            names = new Result(scanned, names.error() + "; tables found by a keyword scan");
        }
        if (names.tables().isEmpty()) return names;
        TreeSet<String> out = new TreeSet<>();
        for (String name : names.tables()) {
            out.add(qualified(name, defaultDb));
        }
        return new Result(Collections.unmodifiableList(new ArrayList<>(out)), names.error());
    }

    private static final Set<String> DML =
            Set.of("SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH");
    private static final Set<String> BEFORE_TABLE =
            Set.of("FROM", "INTO", "UPDATE", "JOIN", "TABLE");
    private static final Set<String> NOT_A_TABLE =
            Set.of(
                    "SELECT",
                    "IF",
                    "NOT",
                    "EXISTS",
                    "WHERE",
                    "SET",
                    "VALUES",
                    "VALUE",
                    "LATERAL",
                    "DUAL",
                    "IGNORE",
                    "LOW_PRIORITY",
                    "DELAYED",
                    "HIGH_PRIORITY",
                    "QUICK",
                    "ONLY");

    /**
     * Names after the keywords that precede a table, outside string literals; for statements that
     * do not parse.
     */
    static List<String> keywordScan(String sql) {
        String s = shape(sql); // no literals left to mistake for keywords
        List<String> tokens = new ArrayList<>();
        java.util.regex.Matcher m = TOKEN.matcher(s);
        while (m.find()) tokens.add(m.group());
        boolean createIndex =
                tokens.size() > 2
                        && "CREATE".equalsIgnoreCase(tokens.get(0))
                        && tokens.subList(1, Math.min(4, tokens.size())).stream()
                                .anyMatch(t -> t.equalsIgnoreCase("INDEX"));
        TreeSet<String> out = new TreeSet<>();
        for (int i = 0; i + 1 < tokens.size(); i++) {
            String k = tokens.get(i).toUpperCase(Locale.ROOT);
            if (!(BEFORE_TABLE.contains(k) || (createIndex && "ON".equals(k)))) continue;
            int j = i + 1;
            while (j < tokens.size()
                    && NOT_A_TABLE.contains(tokens.get(j).toUpperCase(Locale.ROOT))
                    && !"SELECT".equalsIgnoreCase(tokens.get(j))) j++;
            if (j >= tokens.size()) break;
            String name = tokens.get(j);
            if (!NAME.matcher(name).matches()
                    || NOT_A_TABLE.contains(name.toUpperCase(Locale.ROOT))) continue;
            out.add(name);
        }
        return new ArrayList<>(out);
    }

    private static final java.util.regex.Pattern TOKEN =
            java.util.regex.Pattern.compile(
                    "(?:`[^`]*`|[A-Za-z0-9_$]+)(?:\\.(?:`[^`]*`|[A-Za-z0-9_$]+))?|[^\\s]");
    private static final java.util.regex.Pattern NAME =
            java.util.regex.Pattern.compile(
                    "(?:`[^`]*`|[A-Za-z_$][A-Za-z0-9_$]*)(?:\\.(?:`[^`]*`|[A-Za-z_$][A-Za-z0-9_$]*))?");

    /**
     * Why a statement is beyond what the parser is given ({@link #MAX_CASE_DEPTH}, {@link
     * #MAX_PAREN_DEPTH}), or null: counted over its shape (no literal left to hold a word or a
     * parenthesis), outside backtick-quoted names; a word in a comment counts too, which can only
     * keep a statement from the parser.
     */
    static String beyondBounds(String shape) {
        int caseDepth = 0, maxCase = 0, paren = 0, maxParen = 0;
        int n = shape.length();
        for (int i = 0; i < n; i++) {
            char c = shape.charAt(i);
            if (c == '`') {
                int j = shape.indexOf('`', i + 1);
                i = j < 0 ? n : j;
            } else if (c == '(') {
                maxParen = Math.max(maxParen, ++paren);
            } else if (c == ')') {
                paren = Math.max(0, paren - 1);
            } else if (isWordChar(c)) {
                int j = i;
                while (j < n && isWordChar(shape.charAt(j))) j++;
                if (j - i == 4 && shape.regionMatches(true, i, "CASE", 0, 4)) {
                    maxCase = Math.max(maxCase, ++caseDepth);
                } else if (j - i == 3
                        && shape.regionMatches(true, i, "END", 0, 3)
                        && caseDepth > 0) {
                    caseDepth--;
                }
                i = j - 1;
            }
        }
        if (maxCase > MAX_CASE_DEPTH) {
            return "not parsed: CASE expressions nested "
                    + maxCase
                    + " deep (the parser is given at most "
                    + MAX_CASE_DEPTH
                    + ")";
        }
        if (maxParen > MAX_PAREN_DEPTH) {
            return "not parsed: parentheses nested "
                    + maxParen
                    + " deep (the parser is given at most "
                    + MAX_PAREN_DEPTH
                    + ")";
        }
        return null;
    }

    /**
     * The names as the parser found them (unqualified): one attempt, for a statement within the
     * bounds.
     */
    private Result parse(String sql) {
        String beyond = beyondBounds(shape(sql));
        if (beyond != null) return Result.failed(beyond);
        Statement statement;
        try {
            statement =
                    CCJSqlParserUtil.parseStatement(
                            CCJSqlParserUtil.newParser(sql)
                                    .withBackslashEscapeCharacter(true)
                                    .withTimeOut(timeoutMillis)
                                    .withAllowComplexParsing(false),
                            executor());
        } catch (JSQLParserException e) {
            String reason = firstLine(e);
            if (reason.equals(TIMED_OUT)) abandonParserThread();
            return Result.failed("statement did not parse: " + reason);
        } catch (RuntimeException | StackOverflowError e) {
            return Result.failed("statement did not parse: " + e.getClass().getSimpleName());
        }
        if (statement == null) return Result.of(List.of());
        Set<String> names;
        try {
            if (statement instanceof net.sf.jsqlparser.statement.create.index.CreateIndex ci) {
                names = Set.of(ci.getTable().getFullyQualifiedName());
            } else {
                names = new TablesNamesFinder<Void>().getTables(statement);
            }
        } catch (UnsupportedOperationException e) {
            return Result.failed(
                    "tables of a "
                            + statement.getClass().getSimpleName()
                            + " statement are not read");
        } catch (RuntimeException | StackOverflowError e) {
            return Result.failed("tables not read: " + e.getClass().getSimpleName());
        }
        return Result.of(new ArrayList<>(names));
    }

    /**
     * The statement with every string, number and hexadecimal literal replaced by {@code ?} (a
     * parameter marker, which the parser reads where a literal may stand); identifiers, quoted with
     * backticks or not, stay as written. Comments are kept.
     */
    public static String shape(String sql) {
        StringBuilder b = new StringBuilder(sql.length());
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"') {
                int j = i + 1;
                while (j < n) {
                    char d = sql.charAt(j);
                    if (d == '\\') {
                        j += 2;
                    } else if (d == c) {
                        if (j + 1 < n && sql.charAt(j + 1) == c) j += 2; // doubled quote
                        else break;
                    } else {
                        j++;
                    }
                }
                b.append('?');
                i = Math.min(n, j + 1);
            } else if (c == '`') {
                int j = sql.indexOf('`', i + 1);
                j = j < 0 ? n : j + 1;
                b.append(sql, i, j);
                i = j;
            } else if ((c == 'x' || c == 'X' || c == 'b' || c == 'B')
                    && i + 1 < n
                    && sql.charAt(i + 1) == '\''
                    && (i == 0 || !isWordChar(sql.charAt(i - 1)))) {
                i++; // x'0A', b'01': the quote is replaced next
            } else if (c >= '0' && c <= '9' && (i == 0 || !isWordChar(sql.charAt(i - 1)))) {
                int j = i;
                while (j < n && (isWordChar(sql.charAt(j)) || sql.charAt(j) == '.')) j++;
                b.append('?');
                i = j;
            } else if (isWordChar(c)) {
                int j = i;
                while (j < n && isWordChar(sql.charAt(j))) j++;
                b.append(sql, i, j);
                i = j;
            } else {
                b.append(c);
                i++;
            }
        }
        return b.toString();
    }

    private static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    /**
     * {@code `Shop`.`Cards`} -> {@code shop.cards}; {@code cards} -> {@code <db>.cards} when db is
     * known.
     */
    public static String qualified(String name, String defaultDb) {
        String plain = name.replace("`", "").replace("\"", "").trim().toLowerCase(Locale.ROOT);
        if (plain.indexOf('.') < 0 && defaultDb != null && !defaultDb.isEmpty()) {
            return defaultDb.toLowerCase(Locale.ROOT) + "." + plain;
        }
        return plain;
    }

    private static String firstLine(JSQLParserException e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) t = t.getCause();
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        if (m.contains("Time out")) return TIMED_OUT;
        m = m.strip();
        int nl = m.indexOf('\n');
        m = nl < 0 ? m : m.substring(0, nl);
        return m.length() > 200 ? m.substring(0, 200) + "..." : m;
    }

    static final String TIMED_OUT = "parsing took longer than the timeout";

    /**
     * A timed-out parse may still run on the parser's thread: the next statement gets a thread of
     * its own.
     */
    private void abandonParserThread() {
        if (parserThread != null) {
            parserThread.shutdownNow();
            parserThread = null;
        }
    }

    private ExecutorService executor() {
        if (parserThread == null) {
            parserThread =
                    Executors.newSingleThreadExecutor(
                            r -> {
                                Thread t = new Thread(r, "auditpipe-sql-parser");
                                t.setDaemon(true);
                                return t;
                            });
        }
        return parserThread;
    }

    @Override
    public void close() {
        abandonParserThread();
    }
}
