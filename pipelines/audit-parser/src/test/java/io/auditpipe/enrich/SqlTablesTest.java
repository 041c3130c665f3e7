package io.auditpipe.enrich;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a hostile statement can cost {@link SqlTables}: one attempt within the timeout, and a share of the time. */
class SqlTablesTest {
    /** Nested CASE expressions over columns (no literal for the shape to replace): at depth 14, 0.1 to 0.9 s of
     *  JSqlParser's simple mode and more of its complex mode (measured 2026-11-26). */
    static String nestedCase(String table, int depth) {
        StringBuilder c = new StringBuilder("SELECT ");
        for (int i = 0; i < depth; i++) c.append("CASE ");
        c.append("a");
        for (int i = 0; i < depth; i++) c.append(" WHEN b THEN c END");
        return c.append(" FROM ").append(table).toString();
    }

    /** Twenty nested parentheses: JSqlParser's complex mode runs into any timeout; its simple mode parses them. */
    static String nestedParentheses(String table) {
        StringBuilder c = new StringBuilder("SELECT * FROM ").append(table).append(" WHERE ");
        for (int i = 0; i < 20; i++) c.append("(");
        c.append("a");
        for (int i = 0; i < 20; i++) c.append(" OR b)");
        return c.toString();
    }

    @Test
    void aStatementBeyondTheTimeoutFallsBackToTheScanAndHoldsUpNoOther() {
        try (SqlTables t = new SqlTables(50)) {
            for (String sql : List.of(nestedCase("shop.cards", 16), nestedParentheses("shop.cards"))) {
                long start = System.nanoTime();
                SqlTables.Result r = t.tablesOf(sql, "shop");
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertEquals(List.of("shop.cards"), r.tables(), sql);
                assertTrue(r.error() == null || r.error().endsWith("tables found by a keyword scan"), r.error());
                assertTrue(millis < 2_000, millis + " ms for one statement with a 50 ms timeout: " + r.error());
            }
            assertEquals("statement did not parse: " + SqlTables.TIMED_OUT + "; tables found by a keyword scan",
                    t.tablesOf(nestedCase("shop.cards", 16) + " WHERE x = 2", "shop").error());
            SqlTables.Result plain = t.tablesOf("SELECT a FROM orders WHERE id = 1", "shop");
            assertEquals(new SqlTables.Result(List.of("shop.orders"), null), plain, "the parser serves the next one");
        }
    }

    @Test
    void theShareRefillsAtATenthOfTheTimeUpToAWindowsWorth() {
        AtomicLong now = new AtomicLong();
        SqlTables.TimeShare share = new SqlTables.TimeShare(now::get);
        assertTrue(share.available(), "a full window's worth at the start: 1 s");
        share.spend(900_000_000L);
        assertTrue(share.available());
        share.spend(200_000_000L); // 1.1 s spent: overdrawn by 0.1 s
        assertFalse(share.available());
        now.addAndGet(1_000_000_000L); // a second later: a tenth of it back, 0.1 s: back to zero
        assertFalse(share.available(), "not until the overdraft is paid back");
        now.addAndGet(1_000_000L);
        assertTrue(share.available());
        now.addAndGet(3_600_000_000_000L); // an hour idle: refilled to a window's worth only
        share.spend(1_000_000_000L);
        assertFalse(share.available());
    }

    @Test
    void withTheShareSpentStatementsGoToTheScanAndTheirShapesAreParsedLater() {
        AtomicLong now = new AtomicLong();
        SqlTables.TimeShare share = new SqlTables.TimeShare(now::get);
        share.spend(2_000_000_000L);
        try (SqlTables t = new SqlTables(1000, share)) {
            SqlTables.Result r = t.tablesOf("SELECT a FROM t1 WHERE x = 1", "db");
            assertEquals(new SqlTables.Result(List.of("db.t1"), SqlTables.BUDGET_SPENT + "; tables found by a keyword scan"), r);
            now.addAndGet(20_000_000_000L); // refilled
            assertEquals(new SqlTables.Result(List.of("db.t1"), null), t.tablesOf("SELECT a FROM t1 WHERE x = 2", "db"),
                    "the shape the spent share skipped was not remembered as unparsable");
        }
    }

    @Test
    void manyDistinctHostileStatementsCostABoundedTime() {
        try (SqlTables t = new SqlTables(100, new SqlTables.TimeShare(System::nanoTime))) {
            long start = System.nanoTime();
            int skipped = 0;
            for (int i = 0; i < 60; i++) {
                SqlTables.Result r = t.tablesOf(nestedCase("t" + i, 14), "db");
                assertEquals(List.of("db.t" + i), r.tables());
                if (r.error().startsWith(SqlTables.BUDGET_SPENT)) skipped++;
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertTrue(skipped > 0, "the budget ran out");
            // 1 s of budget plus a tenth of the time that passed, plus the scans: never 60 timeouts (6 s)
            assertTrue(seconds < 4, seconds + " s");
        }
    }
}
