package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.parser.AuditEvent;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The remembered answers of ControlTags.controlsOf against the shipped table read each time (its
 * rows use every key): one instance over many events from small vocabularies, so that combinations
 * repeat and remembered answers are the ones given.
 */
class ControlTagsTest {
    private static final ControlTags TAGS = ControlTags.load();

    @Property(tries = 3000)
    void rememberedAnswersAreTheTables(@ForAll("events") AuditEvent e) {
        List<String> expected = TAGS.evaluate(e);
        assertEquals(expected, TAGS.controlsOf(e));
        List<String> again = TAGS.controlsOf(e);
        assertEquals(expected, again);
        again.add("changed by a caller"); // each caller gets its own list
        assertEquals(expected, TAGS.controlsOf(e));
    }

    @Provide
    Arbitrary<AuditEvent> events() {
        Arbitrary<String> category =
                Arbitraries.of(
                                "data_read",
                                "data_write",
                                "schema_change",
                                "authentication",
                                "account_management",
                                "administration",
                                "audit_system",
                                "other")
                        .injectNull(0.1);
        Arbitrary<String> action =
                Arbitraries.of(
                                "select",
                                "login",
                                "login_failed",
                                "create_table",
                                "drop_user",
                                "install_plugin",
                                "audit_start",
                                "audit_log_read",
                                "set_global",
                                "change_user")
                        .injectNull(0.1);
        Arbitrary<List<String>> classes =
                Arbitraries.of("pci_cardholder", "hipaa_ephi", "sox_financial")
                        .list()
                        .uniqueElements()
                        .ofMaxSize(3)
                        .map(l -> (List<String>) new ArrayList<>(l))
                        .injectNull(0.1);
        Arbitrary<String> principal =
                Arbitraries.of("administrator", "application", "human").injectNull(0.2);
        Arbitrary<String> authOutcome = Arbitraries.of("success", "failure").injectNull(0.5);
        Arbitrary<Integer> status = Arbitraries.of(0, 1045, 1142, 1227, 1, 2003).injectNull(0.2);
        return Combinators.combine(category, action, classes, principal, authOutcome, status)
                .as(
                        (c, a, d, p, o, s) -> {
                            AuditEvent e = new AuditEvent();
                            e.category = c;
                            e.action = a;
                            e.dataClasses = d;
                            e.principalClass = p;
                            e.authOutcome = o;
                            e.status = s;
                            return e;
                        });
    }
}
