package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.TextTable;
import io.auditpipe.parser.AuditEvent;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EnricherTest {
    static final Map<String, String> CONFIG =
            Map.of(
                    "compliance.data-class.pci_cardholder.tables", "shop.cards, payments.*",
                    "compliance.data-class.pci_cardholder.allowed-principals", "app, dba_*",
                    "compliance.data-class.hipaa_ephi.tables", "clinic.patient*",
                    "compliance.data-class.hipaa_ephi.allowed-principals", "nurse_*",
                    "compliance.data-class.sox_financial.tables", "ledger",
                    "compliance.principals.administrators", "root, dba_*",
                    "compliance.principals.service-accounts", "app, etl_*",
                    "compliance.masking.pattern.us_ssn",
                            "(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])",
                    "compliance.change-windows", "sat,sun 02:00-06:00 UTC");

    final Enricher enricher = new Enricher(ComplianceSettings.fromProperties(CONFIG));

    @AfterEach
    void close() {
        enricher.close();
    }

    static AuditEvent query(String user, String db, String sql) {
        AuditEvent e = new AuditEvent();
        e.eventName = "Query";
        e.user = user;
        e.host = "localhost";
        e.db = db;
        e.sqltext = sql;
        e.status = 0;
        return e;
    }

    static AuditEvent named(String name, String authOutcome) {
        AuditEvent e = new AuditEvent();
        e.eventName = name;
        e.user = "alice";
        e.authOutcome = authOutcome;
        e.status = AuditEvent.AUTH_FAILURE.equals(authOutcome) ? 1045 : 0;
        return e;
    }

    @Test
    void taxonomyOfStatements() {
        List<String[]> cases =
                TextTable.rows(
                        """
                        SELECT c FROM sbtest1 WHERE id=1|data_read|select
                          /* app */ select 1|data_read|select
                        WITH t AS (SELECT 1) SELECT * FROM t|data_read|select
                        INSERT INTO t VALUES (1)|data_write|insert
                        replace into t values (1)|data_write|replace
                        LOAD DATA INFILE 'x' INTO TABLE t|data_write|load_data
                        CREATE USER 'bob'@'%' IDENTIFIED BY 'x'|account_management|create_user
                        ALTER USER bob ACCOUNT LOCK|account_management|alter_user
                        DROP ROLE r1|account_management|drop_role
                        GRANT ALL ON *.* TO bob|account_management|grant
                        REVOKE SELECT ON shop.cards FROM bob|account_management|revoke
                        SET PASSWORD FOR bob = 'x'|account_management|set_password
                        SET DEFAULT ROLE r1 TO bob|account_management|set_default_role
                        CREATE TABLE t (id INT)|schema_change|create_table
                        CREATE OR REPLACE VIEW v AS SELECT 1|schema_change|create_view
                        CREATE UNIQUE INDEX i ON t (a)|schema_change|create_index
                        CREATE DEFINER=`root`@`%` PROCEDURE p() BEGIN END|schema_change|create_procedure
                        DROP DATABASE shop|schema_change|drop_database
                        CREATE SCHEMA s|schema_change|create_database
                        TRUNCATE TABLE t|schema_change|truncate_table
                        RENAME TABLE a TO b|schema_change|rename_table
                        SET GLOBAL max_connections = 10|administration|set_global
                        SET @@global.max_connections = 10|administration|set_global
                        SET PERSIST sql_mode = ''|administration|set_global
                        KILL 42|administration|kill
                        SHUTDOWN|administration|shutdown
                        INSTALL PLUGIN x SONAME 'x.so'|administration|install_plugin
                        FLUSH PRIVILEGES|administration|flush
                        STOP REPLICA|administration|stop_replica
                        SET GLOBAL server_audit_logging = OFF|audit_system|audit_disabled
                        SET GLOBAL server_audit_logging=ON|audit_system|audit_enabled
                        SET GLOBAL audit_log_disable = true|audit_system|audit_disabled
                        SET GLOBAL audit_log_policy = 'NONE'|audit_system|audit_disabled
                        SET GLOBAL audit_log_rotate_on_size = 4096|audit_system|audit_config
                        UNINSTALL PLUGIN audit_log|audit_system|audit_plugin_removed
                        UNINSTALL PLUGIN server_audit|audit_system|audit_plugin_removed
                        INSTALL PLUGIN server_audit SONAME 'server_audit.so'|audit_system|audit_plugin_installed
                        SELECT audit_log_filter_remove_user('%')|audit_system|audit_config
                        SELECT audit_log_read()|audit_system|audit_log_read
                        DELETE FROM mysql.audit_log_filter|audit_system|audit_config
                        SET autocommit = 1|session|set
                        SHOW TABLES|session|show
                        COMMIT|session|commit
                        START TRANSACTION|session|start_transaction
                        USE shop|session|use
                        CALL p()|other|call
                        frobnicate the table|other|frobnicate
                        """);
        for (String[] c : cases) {
            AuditEvent e = enricher.enrich(query("alice", "shop", c[0]));
            assertEquals(c[1] + "/" + c[2], e.category + "/" + e.action, c[0]);
        }
    }

    @Test
    void taxonomyOfRecordsWithoutStatements() {
        assertEquals("authentication/login", kind(named("Connect", AuditEvent.AUTH_SUCCESS)));
        assertEquals(
                "authentication/login_failed",
                kind(named("FAILED_CONNECT", AuditEvent.AUTH_FAILURE)));
        assertEquals(
                "authentication/change_user", kind(named("Change user", AuditEvent.AUTH_SUCCESS)));
        assertEquals("authentication/logout", kind(named("Quit", null)));
        assertEquals("authentication/logout", kind(named("DISCONNECT", null)));
        assertEquals("audit_system/audit_start", kind(named("Audit", null)));
        assertEquals("audit_system/audit_stop", kind(named("NoAudit", null)));
        AuditEvent shutdown = named("shutdown", null);
        shutdown.extra.put("class", "audit");
        assertEquals("audit_system/audit_stop", kind(shutdown));
        assertEquals("administration/shutdown", kind(named("Shutdown", null)));
        assertEquals("session/ping", kind(named("Ping", null)));
        AuditEvent byClass = named("Query", null);
        byClass.commandClass = "create_user";
        assertEquals("account_management/create_user", kind(byClass));
        AuditEvent mariaRead = named("READ", null);
        mariaRead.extra.put("object", "clinic.patients");
        mariaRead.user = "etl_load";
        AuditEvent r = enricher.enrich(mariaRead);
        assertEquals("data_read/read", r.category + "/" + r.action);
        assertEquals(List.of("clinic.patients"), r.tables);
        assertEquals(List.of("hipaa_ephi"), r.accessViolations);
    }

    private String kind(AuditEvent e) {
        AuditEvent r = enricher.enrich(e);
        return r.category + "/" + r.action;
    }

    @Test
    void tablesFromTheStatementQualifiedWithTheCurrentDatabase() {
        AuditEvent e =
                enricher.enrich(
                        query(
                                "app",
                                "shop",
                                "SELECT c.pan, o.total FROM cards c JOIN `payments`.`Orders` o ON o.card = c.id WHERE c.id IN (SELECT id FROM ledger)"));
        assertEquals(List.of("payments.orders", "shop.cards", "shop.ledger"), e.tables);
        assertEquals(List.of("pci_cardholder", "sox_financial"), e.dataClasses);
        assertNull(e.tablesError);
        assertEquals("service_account", e.principalClass);
        assertEquals(
                List.of(),
                e.accessViolations); // app may read cardholder data; sox_financial is not enforced
        assertTrue(e.controls.contains("PCI-DSS-10.2.1.1"));
        assertTrue(e.controls.contains("SOX-ITGC-ACCESS"));
        assertFalse(e.controls.contains("HIPAA-164.312(b)"));
    }

    @Test
    void aStatementThatDoesNotParseSaysSoAndKeepsItsCategory() {
        AuditEvent e =
                enricher.enrich(query("alice", "shop", "SELECT FROM WHERE 4111 1111 1111 1111 ("));
        assertEquals("data_read", e.category);
        assertEquals(List.of(), e.tables);
        assertNotNull(e.tablesError);
        assertTrue(e.tablesError.startsWith("statement did not parse"), e.tablesError);
        assertFalse(e.tablesError.contains("4111 1111 1111 1111"), e.tablesError);
        assertFalse(e.sqltext.contains("4111 1111 1111 1111"), e.sqltext);
    }

    @Test
    void principalsAndViolations() {
        AuditEvent e = enricher.enrich(query("etl_nightly", "clinic", "SELECT * FROM patients"));
        assertEquals("service_account", e.principalClass);
        assertEquals(List.of("hipaa_ephi"), e.dataClasses);
        assertEquals(List.of("hipaa_ephi"), e.accessViolations);
        assertTrue(e.controls.contains("HIPAA-164.312(b)"));
        AuditEvent root = enricher.enrich(query("root", null, "SELECT 1"));
        assertEquals("administrator", root.principalClass);
        assertTrue(root.controls.contains("PCI-DSS-10.2.1.2"));
        assertEquals("person", enricher.enrich(query("alice", null, "SELECT 1")).principalClass);
        AuditEvent nurse =
                enricher.enrich(query("nurse_ann", null, "SELECT * FROM clinic.patient_notes"));
        assertEquals(List.of(), nurse.accessViolations);
    }

    @Test
    void controlsOfAuthenticationAndChanges() {
        AuditEvent failed = enricher.enrich(named("Connect", AuditEvent.AUTH_FAILURE));
        assertEquals(List.of("HIPAA-164.308(a)(5)(ii)(C)", "PCI-DSS-10.2.1.4"), failed.controls);
        AuditEvent denied = query("alice", "shop", "SELECT * FROM cards");
        denied.status = 1142;
        assertTrue(enricher.enrich(denied).controls.contains("PCI-DSS-10.2.1.4"));
        AuditEvent grant =
                enricher.enrich(query("alice", null, "GRANT SELECT ON shop.cards TO bob"));
        assertEquals(List.of("PCI-DSS-10.2.1.5", "SOX-ITGC-ACCESS"), grant.controls);
        AuditEvent createUser = enricher.enrich(query("alice", null, "CREATE USER bob"));
        assertTrue(createUser.controls.contains("PCI-DSS-10.2.1.7"));
        AuditEvent stop =
                enricher.enrich(query("alice", null, "SET GLOBAL server_audit_logging=OFF"));
        assertEquals(List.of("PCI-DSS-10.2.1.6", "SOX-ITGC-CHANGE"), stop.controls);
        AuditEvent read = enricher.enrich(query("alice", null, "SELECT audit_log_read()"));
        assertTrue(read.controls.contains("PCI-DSS-10.2.1.3"));
        AuditEvent ddl =
                enricher.enrich(query("alice", "acct", "ALTER TABLE ledger ADD COLUMN x INT"));
        assertEquals(List.of("acct.ledger"), ddl.tables);
        assertTrue(ddl.controls.contains("SOX-ITGC-CHANGE"));
    }

    @Test
    void cardNumbersAndConfiguredPatternsAreMasked() {
        AuditEvent e =
                query(
                        "app",
                        "shop",
                        "INSERT INTO cards (pan, ssn, note) VALUES ('4111 1111 1111 1111', '078-05-1120', "
                                + "'5500-0000-0000-0004 and 340000000000009')");
        e.extra.put("note", "card 6011000000000004");
        enricher.enrich(e);
        assertEquals(
                "INSERT INTO cards (pan, ssn, note) VALUES ('**** **** **** 1111', '***-**-****', "
                        + "'****-****-****-0004 and ***********0009')",
                e.sqltext);
        assertEquals("card ************0004", e.extra.get("note"));
        assertEquals(List.of("pan", "us_ssn"), e.masked);
        assertEquals(List.of("shop.cards"), e.tables); // read before masking
    }

    @Test
    void numbersThatAreNotCardNumbersStay() {
        SensitiveDataMasker m = ComplianceSettings.defaults().masker();
        for (String text :
                new String[] {
                    "4111111111111112", // Luhn fails
                    "1732300000000", // epoch milliseconds: starts with 1
                    "411111111111", // 12 digits
                    "41111111111111111111111", // 23 digits
                    "2024-11-22 10:00:00",
                    "id=123, 456"
                }) {
            assertEquals(text, m.mask(text).text(), text);
            assertFalse(m.mask(text).changed());
        }
        assertEquals("x=************1111;", m.mask("x=4111111111111111;").text());
        assertEquals("9 ************1111", m.mask("9 4111111111111111").text());
    }

    @Test
    void maskingBytesKeepsEveryOtherByte() {
        SensitiveDataMasker m = ComplianceSettings.defaults().masker();
        byte[] in =
                "{\"q\":\"\u00e9 4111111111111111 \\xff\"}"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] bad = java.util.Arrays.copyOf(in, in.length + 1);
        bad[bad.length - 1] = (byte) 0xff;
        byte[] out = m.mask(bad);
        assertEquals(bad.length, out.length);
        String expected = "{\"q\":\"\u00e9 ************1111 \\xff\"}";
        assertEquals(
                expected,
                new String(out, 0, out.length - 1, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals((byte) 0xff, out[out.length - 1]);
    }

    @Test
    void changeWindows() {
        ComplianceSettings s =
                ComplianceSettings.fromProperties(
                        Map.of(
                                "compliance.change-windows",
                                "sat,sun 02:00-06:00 UTC; fri 23:00-01:00 UTC"));
        assertTrue(
                s.inChangeWindow(
                        Instant.parse("2026-11-21T03:00:00Z").toEpochMilli())); // a Saturday
        assertFalse(s.inChangeWindow(Instant.parse("2026-11-21T06:00:00Z").toEpochMilli()));
        assertFalse(
                s.inChangeWindow(Instant.parse("2026-11-23T03:00:00Z").toEpochMilli())); // Monday
        assertTrue(
                s.inChangeWindow(
                        Instant.parse("2026-11-20T23:30:00Z").toEpochMilli())); // Friday night
        assertTrue(
                s.inChangeWindow(
                        Instant.parse("2026-11-21T00:30:00Z").toEpochMilli())); // past midnight
        assertFalse(ComplianceSettings.defaults().inChangeWindow(0));
    }

    @Test
    void schemaChangesSayWhetherTheyAreInsideAChangeWindow() {
        AuditEvent inside = query("dba_jo", "finance", "ALTER TABLE ledger ADD COLUMN memo TEXT");
        inside.eventTimeMillis =
                Instant.parse("2026-11-21T03:00:00Z").toEpochMilli(); // Saturday 03:00 UTC
        AuditEvent outside = query("dba_jo", "finance", "ALTER TABLE ledger ADD COLUMN memo TEXT");
        outside.eventTimeMillis = Instant.parse("2026-11-23T10:00:00Z").toEpochMilli(); // Monday
        assertEquals(Boolean.TRUE, enricher.enrich(inside).inChangeWindow);
        assertEquals(Boolean.FALSE, enricher.enrich(outside).inChangeWindow);
        AuditEvent read = query("app", "shop", "SELECT * FROM cards");
        read.eventTimeMillis = inside.eventTimeMillis;
        assertNull(enricher.enrich(read).inChangeWindow, "only schema changes are judged");
        try (Enricher none = new Enricher(ComplianceSettings.defaults())) {
            AuditEvent e = query("dba_jo", "finance", "DROP TABLE x");
            e.eventTimeMillis = inside.eventTimeMillis;
            assertEquals(
                    Boolean.FALSE,
                    none.enrich(e).inChangeWindow,
                    "no window configured: every change is outside");
        }
    }

    @Test
    void accessToClassifiedDataSaysWhetherItIsAfterHoursWhenBusinessHoursAreSet() {
        Map<String, String> config = new java.util.HashMap<>(CONFIG);
        config.put("compliance.business-hours", "mon,tue,wed,thu,fri 07:00-19:00 Europe/Berlin");
        try (Enricher withHours = new Enricher(ComplianceSettings.fromProperties(config))) {
            AuditEvent day = query("nurse_amy", "clinic", "SELECT * FROM patients");
            day.eventTimeMillis =
                    Instant.parse("2026-11-23T09:00:00Z").toEpochMilli(); // Monday 10:00 in Berlin
            AuditEvent night = query("nurse_amy", "clinic", "SELECT * FROM patients");
            night.eventTimeMillis =
                    Instant.parse("2026-11-23T18:30:00Z").toEpochMilli(); // Monday 19:30 in Berlin
            AuditEvent weekend = query("nurse_amy", "clinic", "SELECT * FROM patients");
            weekend.eventTimeMillis =
                    Instant.parse("2026-11-22T09:00:00Z").toEpochMilli(); // Sunday
            assertEquals(Boolean.FALSE, withHours.enrich(day).afterHours);
            assertEquals(Boolean.TRUE, withHours.enrich(night).afterHours);
            assertEquals(Boolean.TRUE, withHours.enrich(weekend).afterHours);
            AuditEvent unclassified = query("nurse_amy", "clinic", "SELECT 1");
            unclassified.eventTimeMillis = night.eventTimeMillis;
            assertNull(
                    withHours.enrich(unclassified).afterHours,
                    "only access to classified data is judged");
        }
        AuditEvent noHours = query("nurse_amy", "clinic", "SELECT * FROM patients");
        assertNull(enricher.enrich(noHours).afterHours, "no business hours configured: not judged");
    }

    @Test
    void badSettingsNameTheKey() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                ComplianceSettings.fromProperties(
                                        Map.of(
                                                "compliance.data-class.pci.tables", "x",
                                                "compliance.masking.pattern.bad", "([",
                                                "compliance.change-windows",
                                                        "someday 02:00-03:00 UTC",
                                                "compliance.business-hours",
                                                        "mon 07:00-19:00 Mars/Olympus",
                                                "compliance.colour", "red")));
        for (String key :
                new String[] {
                    "compliance.data-class.pci.tables",
                    "compliance.masking.pattern.bad",
                    "compliance.change-windows",
                    "compliance.business-hours",
                    "compliance.colour"
                }) {
            assertTrue(e.getMessage().contains("'" + key + "'"), e.getMessage());
        }
    }

    @Test
    void theControlTableIsReadFromTheJarAndEveryRowIsWellFormed() {
        ControlTags tags = ControlTags.load();
        assertTrue(tags.rows().size() >= 10);
        for (String control :
                List.of(
                        "PCI-DSS-10.2.1.1",
                        "PCI-DSS-10.2.1.2",
                        "PCI-DSS-10.2.1.3",
                        "PCI-DSS-10.2.1.4",
                        "PCI-DSS-10.2.1.5",
                        "PCI-DSS-10.2.1.6",
                        "PCI-DSS-10.2.1.7",
                        "HIPAA-164.312(b)",
                        "SOX-ITGC-ACCESS",
                        "SOX-ITGC-CHANGE")) {
            assertTrue(tags.rows().stream().anyMatch(r -> r.control().equals(control)), control);
        }
        for (ControlTags.Row r : tags.rows()) {
            if (r.when().containsKey("category")) {
                for (Glob g : r.when().get("category")) {
                    assertTrue(
                            EventTaxonomy.CATEGORIES.contains(g.text()),
                            r.control() + ": category " + g);
                }
            }
        }
    }

    @Test
    void theShapeOfAStatementHasNoLiterals() {
        assertEquals(
                "SELECT c FROM sbtest1 WHERE id=? AND `x1`.`2y` IN (?, ?) AND note = ? LIMIT ?",
                SqlTables.shape(
                        "SELECT c FROM sbtest1 WHERE id=42 AND `x1`.`2y` IN (1.5, 0xFF) AND note = 'it''s \\' 4111' LIMIT 10"));
        assertEquals(
                "INSERT INTO t VALUES (?, ?, ?)",
                SqlTables.shape("INSERT INTO t VALUES (x'0A', \"a\\\"b\", 4111111111111111)"));
        try (SqlTables t = new SqlTables(1000)) {
            assertEquals(
                    List.of("shop.t"),
                    t.tablesOf("SELECT * FROM t WHERE a = 'x' LIMIT 5", "shop").tables());
            assertEquals(
                    List.of("other.t"),
                    t.tablesOf("SELECT * FROM t WHERE a = 'y' LIMIT 6", "other")
                            .tables()); // cached shape, own db
        }
    }

    @Test
    void whatARealServerSendsAndCuts() {
        try (SqlTables t = new SqlTables(1000)) {
            // sysbench's DDL (as MariaDB logs it): literals in DDL are not replaced by markers
            SqlTables.Result ddl =
                    t.tablesOf(
                            "CREATE TABLE sbtest1(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n"
                                    + "  PRIMARY KEY (id)\n) /*! ENGINE = innodb */",
                            "sbtest");
            assertEquals(new SqlTables.Result(List.of("sbtest.sbtest1"), null), ddl);
            assertEquals(
                    new SqlTables.Result(List.of("sbtest.sbtest1"), null),
                    t.tablesOf("CREATE INDEX k_1 ON sbtest1(k)", "sbtest"));
            // a statement the server cut at its log limit: a keyword scan, said to be one
            SqlTables.Result cut =
                    t.tablesOf(
                            "INSERT INTO sbtest2(k, c, pad) VALUES(251, '7076-4394', '5538'),(253, ",
                            "sbtest");
            assertEquals(List.of("sbtest.sbtest2"), cut.tables());
            assertTrue(
                    cut.error().startsWith("statement did not parse")
                            && cut.error().endsWith("tables found by a keyword scan"),
                    cut.error());
            SqlTables.Result join =
                    t.tablesOf(
                            "SELECT * FROM a JOIN `s`.`b` ON a.x = b.y WHERE a.z IN (SELECT id FROM c WHERE",
                            null);
            assertEquals(List.of("a", "c", "s.b"), join.tables());
        }
    }

    @Test
    void aCardNumberUsedAsATableNameIsMaskedThere() {
        AuditEvent e =
                enricher.enrich(
                        query("app", "shop", "SELECT * FROM `4111111111111111` WHERE id = 1"));
        assertEquals(List.of("shop.************1111"), e.tables);
        assertEquals(List.of("pan"), e.masked);
    }

    @Test
    void aRunOfDigitsAsLongAsALineMayBeNeitherOverflowsNorLeaks() {
        SensitiveDataMasker m =
                new SensitiveDataMasker(
                        true,
                        Map.of(
                                "us_ssn",
                                "(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])",
                                "deep",
                                "(a|b)+c"));
        String digits = "x=" + "1 ".repeat(1_000_000) + "4111 1111 1111 1111;";
        SensitiveDataMasker.Masked out = m.mask(digits);
        assertEquals(digits.length(), out.text().length());
        assertEquals(List.of("pan"), out.found());
        assertFalse(out.text().contains("4111 1111 1111 1111"));
        // a configured expression that recurses too deep masks the whole text rather than throw
        String deep = "ab".repeat(200_000) + " 078-05-1120";
        SensitiveDataMasker.Masked d = m.mask(deep);
        assertTrue(d.found().contains("deep"), d.found().toString());
        assertFalse(d.text().contains("078-05-1120"));
        assertEquals(deep.length(), d.text().length());
    }
}
