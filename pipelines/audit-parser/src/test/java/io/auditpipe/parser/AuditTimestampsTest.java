package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.time.ZoneId;
import java.time.ZoneOffset;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The digit-by-digit reading of the common shapes against java.time's parsers (the reference): the
 * same epoch milliseconds, or both refuse. The fields range past their limits (month 13, day 32,
 * hour 24, second 60, February 29 of common years) and the zones include daylight saving gaps.
 */
class AuditTimestampsTest {
    private static final ZoneId[] ZONES = {
        ZoneOffset.UTC,
        ZoneId.of("UTC"),
        ZoneId.of("Europe/Berlin"),
        ZoneId.of("America/New_York"),
        ZoneId.of("Asia/Kolkata"),
        ZoneOffset.ofHours(-7)
    };

    @Provide
    Arbitrary<String> timestamps() {
        Arbitrary<String> date =
                Combinators.combine(
                                Arbitraries.oneOf(
                                        Arbitraries.integers().between(1969, 2101),
                                        Arbitraries.integers().between(0, 9999)),
                                Arbitraries.integers().between(0, 13),
                                Arbitraries.integers().between(0, 32))
                        .as((y, m, d) -> String.format("%04d-%02d-%02d", y, m, d));
        Arbitrary<String> time =
                Combinators.combine(
                                Arbitraries.integers().between(0, 24),
                                Arbitraries.integers().between(0, 60),
                                Arbitraries.integers().between(0, 60))
                        .as((h, m, s) -> String.format("%02d:%02d:%02d", h, m, s));
        return Combinators.combine(
                        date,
                        Arbitraries.of("T", " ", "t", "_"),
                        time,
                        Arbitraries.of("", "Z", " UTC", "+02:00", ".250Z", "z", " UTC ", "X"))
                .as((d, sep, t, suffix) -> d + sep + t + suffix);
    }

    @Property(tries = 5000)
    void theCommonShapesReadAsJavaTimeReadsThem(
            @ForAll("timestamps") String text, @ForAll("zones") int zone) {
        assertEquals(
                reference(text, ZONES[zone]),
                outcome(() -> AuditTimestamps.parseEpochMillis(text, ZONES[zone])),
                text + " in " + ZONES[zone]);
    }

    @Provide
    Arbitrary<Integer> zones() {
        return Arbitraries.integers().between(0, ZONES.length - 1);
    }

    @Property(tries = 200)
    void theFastPathReadsTheShapesTheAuditPluginsWrite(@ForAll("timestamps") String text) {
        if (outcome(() -> AuditTimestamps.parseWithJavaTime(text, ZoneOffset.UTC))
                .startsWith("refused")) return;
        String shape = text.substring(10, 11) + text.substring(19);
        if (shape.equals("T")
                || shape.equals(" ")
                || shape.equals("TZ")
                || shape.equals(" Z")
                || shape.equals("T UTC")
                || shape.equals("  UTC")) {
            assertNotEquals(
                    AuditTimestamps.NOT_READ,
                    AuditTimestamps.readCommonShape(text, ZoneOffset.UTC),
                    text);
        }
    }

    private static String reference(String text, ZoneId zone) {
        return outcome(() -> AuditTimestamps.parseWithJavaTime(text, zone));
    }

    private static String outcome(java.util.function.LongSupplier parse) {
        try {
            return Long.toString(parse.getAsLong());
        } catch (IllegalArgumentException e) {
            return "refused: " + e.getMessage();
        }
    }
}
