package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a hostile statement can cost {@link SqlTables}: bounded by the statement alone (its
 * nesting), never the clock.
 */
class SqlTablesTest {
    /**
     * Nested CASE expressions over columns (no literal for the shape to replace): at depth 14, 0.1
     * to 0.9 s of JSqlParser's simple mode and more of its complex mode (measured 2026-11-26).
     */
    static String nestedCase(String table, int depth) {
        StringBuilder c = new StringBuilder("SELECT ");
        for (int i = 0; i < depth; i++) c.append("CASE ");
        c.append("a");
        for (int i = 0; i < depth; i++) c.append(" WHEN b THEN c END");
        return c.append(" FROM ").append(table).toString();
    }

    /**
     * Nested parentheses: JSqlParser's complex mode runs into any timeout at twenty; its simple
     * mode parses them.
     */
    static String nestedParentheses(String table, int depth) {
        StringBuilder c = new StringBuilder("SELECT * FROM ").append(table).append(" WHERE ");
        for (int i = 0; i < depth; i++) c.append("(");
        c.append("a");
        for (int i = 0; i < depth; i++) c.append(" OR b)");
        return c.toString();
    }

    @Test
    void aStatementNestedBeyondTheBoundsGoesToTheScanWithoutTheParser() {
        try (SqlTables t = new SqlTables(1000)) {
            assertNull(
                    t.tablesOf(nestedCase("shop.cards", SqlTables.MAX_CASE_DEPTH), "shop").error(),
                    "within: parsed");
            SqlTables.Result r =
                    t.tablesOf(nestedCase("shop.cards", SqlTables.MAX_CASE_DEPTH + 1), "shop");
            assertEquals(
                    new SqlTables.Result(
                            List.of("shop.cards"),
                            "not parsed: CASE expressions nested 7 deep (the parser "
                                    + "is given at most 6); tables found by a keyword scan"),
                    r);
            r = t.tablesOf(nestedParentheses("shop.cards", SqlTables.MAX_PAREN_DEPTH + 1), "shop");
            assertEquals(
                    new SqlTables.Result(
                            List.of("shop.cards"),
                            "not parsed: parentheses nested 33 deep (the parser "
                                    + "is given at most 32); tables found by a keyword scan"),
                    r);
            assertNull(
                    t.tablesOf(nestedParentheses("shop.cards", SqlTables.MAX_PAREN_DEPTH), "shop")
                            .error());
            // flat CASE expressions, parentheses closed again, words in strings and names: not
            // nesting
            assertNull(
                    SqlTables.beyondBounds(
                            SqlTables.shape(
                                    "SELECT "
                                            + "CASE a WHEN b THEN c END, ".repeat(20)
                                            + "(((a))), "
                                            + "(b), ".repeat(40)
                                            + "'case case case case case case case', `case` FROM t")));
            assertEquals(
                    null,
                    t.tablesOf("SELECT a FROM orders WHERE id = 1", "shop").error(),
                    "the parser serves the next one");
        }
    }

    @Test
    void theResultDependsOnTheStatementAloneNeverOnTheClock() {
        // a replay enriches as the first run did: the same statements give the same results, in any
        // order, from a fresh instance (no cache) or a warm one, whatever else was parsed before
        List<String> statements = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) {
            statements.add(
                    i % 4 == 0
                            ? nestedCase("t" + i, 14)
                            : "SELECT c FROM sbtest"
                                    + (i % 7)
                                    + " WHERE id BETWEEN "
                                    + i
                                    + " AND "
                                    + (i + 99)
                                    + " ORDER BY c");
        }
        java.util.Map<String, SqlTables.Result> first = new java.util.HashMap<>();
        try (SqlTables t = new SqlTables(1000)) {
            for (String s : statements) first.put(s, t.tablesOf(s, "db"));
        }
        java.util.Collections.reverse(statements);
        try (SqlTables t = new SqlTables(1000)) {
            for (String s : statements) assertEquals(first.get(s), t.tablesOf(s, "db"), s);
        }
    }

    @Test
    void aStatementBeyondTheTimeoutFallsBackToTheScanAndHoldsUpNoOther() {
        // the safety net: here forced with a 1 ms timeout on a statement within the bounds
        try (SqlTables t = new SqlTables(1)) {
            String sql = nestedCase("shop.cards", SqlTables.MAX_CASE_DEPTH) + " WHERE x = 2";
            long start = System.nanoTime();
            SqlTables.Result r = t.tablesOf(sql, "shop");
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(List.of("shop.cards"), r.tables());
            assertTrue(
                    r.error() == null
                            || r.error()
                                    .equals(
                                            "statement did not parse: "
                                                    + SqlTables.TIMED_OUT
                                                    + "; tables found by a keyword scan"),
                    r.error());
            assertTrue(millis < 2_000, millis + " ms for one statement with a 1 ms timeout");
        }
        try (SqlTables t = new SqlTables(1000)) {
            SqlTables.Result plain = t.tablesOf("SELECT a FROM orders WHERE id = 1", "shop");
            assertEquals(new SqlTables.Result(List.of("shop.orders"), null), plain);
        }
    }

    @Test
    void manyDistinctHostileStatementsCostABoundedTime() {
        try (SqlTables t = new SqlTables(1000)) {
            long start = System.nanoTime();
            for (int i = 0; i < 60; i++) {
                SqlTables.Result r = t.tablesOf(nestedCase("t" + i, 14), "db");
                assertEquals(List.of("db.t" + i), r.tables());
                assertTrue(
                        r.error().startsWith("not parsed: CASE expressions nested 14 deep"),
                        r.error());
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            // each a scan, never a parse: 60 of them parsed would take 30 s
            assertTrue(seconds < 1, seconds + " s");
        }
    }
}
