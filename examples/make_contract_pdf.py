#!/usr/bin/env python3
"""Write examples/contract.pdf: a small, valid, text-based PDF (standard
Helvetica, no dependencies) used by the quick start and the tests.

The content is fictional. Regenerate with: python3 examples/make_contract_pdf.py
"""
import os
import zlib

LINES = [
    "MASTER SERVICES AGREEMENT",
    "",
    "This Agreement is made on 3 March 2026 between Northwind Legal LLP",
    "(the Client) and Contoso Data Services Ltd (the Supplier).",
    "",
    "1. Term. This Agreement starts on the Effective Date and continues",
    "   for twenty-four (24) months unless terminated earlier.",
    "2. Fees. The Client shall pay EUR 48,000 per year, invoiced quarterly,",
    "   payable within thirty (30) days of the invoice date.",
    "3. Limitation of liability. The Supplier's total liability is capped",
    "   at the fees paid in the twelve (12) months before the claim.",
    "4. Confidentiality. Each party keeps the other's Confidential",
    "   Information secret for five (5) years after termination.",
    "5. Governing law. This Agreement is governed by the laws of England.",
    "",
    "Signed: J. Alvarez (Client)        M. Chen (Supplier)",
]


def escape(s):
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build():
    text = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"]
    for line in LINES:
        text.append("(%s) '" % escape(line))
    text.append("ET")
    stream = zlib.compress("\n".join(text).encode("latin-1"))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract.pdf")
    with open(path, "wb") as f:
        f.write(build())
    print(path)
