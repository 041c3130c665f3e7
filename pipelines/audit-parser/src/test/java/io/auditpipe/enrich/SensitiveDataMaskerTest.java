package io.auditpipe.enrich;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The shipped SSN expression, found without java.util.regex, masks what the expression masks. */
class SensitiveDataMaskerTest {
    private static final SensitiveDataMasker SCANNED =
            new SensitiveDataMasker(true, Map.of("us_ssn", SensitiveDataMasker.US_SSN_EXPRESSION));
    // the same expression spelled otherwise: java.util.regex finds it
    private static final SensitiveDataMasker BY_REGEX =
            new SensitiveDataMasker(
                    true, Map.of("us_ssn", "(?:" + SensitiveDataMasker.US_SSN_EXPRESSION + ")"));

    @Provide
    Arbitrary<String> texts() {
        Arbitrary<String> piece =
                Arbitraries.of(
                        "0",
                        "1",
                        "2",
                        "9",
                        "-",
                        "--",
                        "a",
                        " ",
                        "123-45-6789",
                        "078-05-1120",
                        "12-34",
                        "4111 1111 1111 1111",
                        "é");
        return piece.list().ofMaxSize(16).map(l -> String.join("", l));
    }

    @Property(tries = 5000)
    void theScannerMasksWhatTheExpressionMasks(@ForAll("texts") String text) {
        assertEquals(BY_REGEX.mask(text), SCANNED.mask(text), text);
    }

    @Test
    void ssnsAreMaskedAndTheirNeighboursLeftAlone() {
        SensitiveDataMasker.Masked m =
                SCANNED.mask("ssn 123-45-6789, not 1123-45-6789 nor 123-45-67890; 078-05-1120");
        assertEquals("ssn ***-**-****, not 1123-45-6789 nor 123-45-67890; ***-**-****", m.text());
        assertEquals(java.util.List.of("us_ssn"), m.found());
    }

    @Test
    void theSchemaShipsTheExpressionTheScannerStandsFor() throws Exception {
        String schema = Files.readString(Path.of("..", "..", "schemas", "config.schema.json"));
        assertTrue(
                schema.contains("\"us_ssn\": \"" + SensitiveDataMasker.US_SSN_EXPRESSION + "\""),
                "schemas/config.schema.json's default us_ssn is no longer SensitiveDataMasker.US_SSN_EXPRESSION: "
                        + "change both, or the default is found by java.util.regex (slower, still right)");
    }
}
