"""The throw-away PKI verifies like a real one."""

import datetime as dt

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import padding

from zoneproof._util import certs


def test_issued_cert_chains_to_ca_and_carries_sans() -> None:
    ca = certs.make_ca("test-ca")
    leaf = certs.issue_cert(ca, "srv", sans=("127.0.0.1", "localhost"))
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem)
    cert = x509.load_pem_x509_certificate(leaf.cert_pem)
    ca_cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes,  # type: ignore[union-attr,call-arg]
                                padding.PKCS1v15(), cert.signature_hash_algorithm)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert cert.not_valid_after_utc > dt.datetime.now(dt.UTC) + dt.timedelta(days=300)


def test_client_cert_has_organization_and_client_usage() -> None:
    leaf = certs.issue_cert(certs.make_ca("ca"), "admin", organization="system:masters",
                            client=True)
    cert = x509.load_pem_x509_certificate(leaf.cert_pem)
    org = cert.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)[0].value
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert org == "system:masters"
    assert x509.ExtendedKeyUsageOID.CLIENT_AUTH in usage
