"""Secret forms composed for the redaction tests: (line as software or people write it, the secret).

Every value is fake (random-looking, made up here); each test asserts the secret part never survives.
"""

from __future__ import annotations

H40 = "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc"
B64 = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3OA=="

CORPUS: list[tuple[str, str]] = [
    # Slack
    ("export SLACK_BOT_TOKEN=xoxb-1234567890-0987654321-AbCdEfGhIjKl", "xoxb-1234567890-0987654321-AbCdEfGhIjKl"),
    ("app token xapp-1-A0123456-1234567890-abcdef0123456789", "xapp-1-A0123456-1234567890-abcdef0123456789"),
    ("xoxp-2222222222-3333333333-4444444444-5555aaaa in the request", "xoxp-2222222222-3333333333-4444444444-5555aaaa"),
    (
        "webhook https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/Zq8wE7rT6yU5iO4pA3sD2fG1",
        "Zq8wE7rT6yU5iO4pA3sD2fG1",
    ),
    ("POST https://hooks.slack.com/workflows/T0ABCDEF1/A0ABC/4242/Kk9Jj8Hh7Gg6", "Kk9Jj8Hh7Gg6"),
    # Hugging Face, OpenAI, Anthropic
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("huggingface-cli login --token hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa987654", "hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa987654"),
    ("openai.api_key = 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56'", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"),
    ("ANTHROPIC_API_KEY: sk-ant-api03-Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk1L", "sk-ant-api03-Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk1L"),
    # GitHub, GitLab
    (
        "git clone https://ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r",
        "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    ),
    (
        "token github_pat_11AABBCCD0123456789_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt",
        "github_pat_11AABBCCD0123456789_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt",
    ),
    ("GH_TOKEN=gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("CI_JOB_TOKEN glpat-xY7zW6vU5tS4rQ3pO2nM", "glpat-xY7zW6vU5tS4rQ3pO2nM"),
    # Cloud
    ("aws_access_key_id = AKIAZ7X6W5V4U3T2S1R0", "AKIAZ7X6W5V4U3T2S1R0"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"),
    (
        "aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD",
        "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD",
    ),
    ("key=AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    (f"DefaultEndpointsProtocol=https;AccountName=ml;AccountKey={B64};EndpointSuffix=core.windows.net", B64),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=Qk9PTXNoYWthbGFrYTEyMzQ1Njc4OTA=",
        "Qk9PTXNoYWthbGFrYTEyMzQ1Njc4OTA=",
    ),
    (
        "GET https://ml.blob.core.windows.net/ckpt/m.pt?sv=2022-11-02&ss=b&sp=r&se=2026-12-31&sig=Xy7%2BaBcD9eFgH0iJkLmNoPqRs%3D",
        "Xy7%2BaBcD9eFgH0iJkLmNoPqRs%3D",
    ),
    ('  "private_key_id": "3f2e1d0c9b8a79685746352413021f0e9d8c7b6a",', "3f2e1d0c9b8a79685746352413021f0e9d8c7b6a"),
    # ML platforms
    (f"wandb login {H40}", H40),
    (f"WANDB_API_KEY={H40[::-1]}", H40[::-1]),
    ("wandb.login(key='0a1b2c3d4e5f60718293a4b5c6d7e8f901234567')", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"),
    ("api key wandb_v1_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78", "wandb_v1_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78"),
    ("NGC_API_KEY=nvapi-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3", "nvapi-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3"),
    (
        "docker login nvcr.io -u '$oauthtoken' -p nvapi-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp",
        "nvapi-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp",
    ),
    ("DATABRICKS_TOKEN dapi0123456789abcdef0123456789abcdef", "dapi0123456789abcdef0123456789abcdef"),
    (
        "host=https://x.cloud.databricks.com token=dapife9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a-2",
        "dapife9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
    ),
    ('{"username":"alice","key":"0123456789abcdef0123456789abcdef"}', "0123456789abcdef0123456789abcdef"),
    ("Replicate r8_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St", "r8_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St"),
    # Payments and package registries
    ("stripe.api_key = sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("rk_test_51HabcdEFGhijKLmnOPqrsTUvwx", "rk_test_51HabcdEFGhijKLmnOPqrsTUvwx"),
    (
        "//registry.npmjs.org/:_authToken=npm_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
        "npm_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78",
    ),
    (
        "password = pypi-AgEIcHlwaS5vcmcCJGE1YjJjM2Q0LWU1ZjYtNzg5MC1hYmNkLWVmMDEyMzQ1Njc4OQACKlszLCJhYmMiXQAABiA",
        "pypi-AgEIcHlwaS5vcmcCJGE1YjJjM2Q0LWU1ZjYtNzg5MC1hYmNkLWVmMDEyMzQ1Njc4OQACKlszLCJhYmMiXQAABiA",
    ),
    (
        "SENDGRID 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",
        "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",
    ),
    # URLs with credentials
    ("postgres://trainer:Tr4in3r-Pa55@db.internal:5432/runs", "Tr4in3r-Pa55"),
    ("redis://:n0User-Pa55word@cache:6379/0", "n0User-Pa55word"),
    ("mongodb://ml:p@ss@w0rd!@mongo:27017", "p@ss@w0rd!"),
    ("https://oauth2:glpat-Qq1Ww2Ee3Rr4Tt5Yy6Uu@gitlab.example.com/g/p.git", "glpat-Qq1Ww2Ee3Rr4Tt5Yy6Uu"),
    ("amqp://guest:Gu3st-S3cret@rabbit:5672/", "Gu3st-S3cret"),
    # NAME=value, env, YAML, CLI flags
    ("MY_SECRET_KEY=abc123xyz", "abc123xyz"),
    ("DB_PASSWORD=correct-horse-battery", "correct-horse-battery"),
    ("mysql_passwd: Sup3rS3cr3t", "Sup3rS3cr3t"),
    ("GOOGLE_APPLICATION_CREDENTIALS=eyJ0eXAiOiJjcmVkIn0-notreally-Zm9v", "eyJ0eXAiOiJjcmVkIn0-notreally-Zm9v"),
    ("client_secret: 'GOCSPX-Ab12Cd34Ef56Gh78Ij90'", "GOCSPX-Ab12Cd34Ef56Gh78Ij90"),
    ("  password: hunter2hunter2", "hunter2hunter2"),
    (
        "python train.py --hf-token hf_QqWwEeRrTtYyUuIiOoPpAaSsDdFfGgHh12 --lr 3e-4",
        "hf_QqWwEeRrTtYyUuIiOoPpAaSsDdFfGgHh12",
    ),
    ("mlflow server --password Mlfl0wPa55 --port 5000", "Mlfl0wPa55"),
    ('ENV ACCESS_TOKEN="at-9f8e7d6c5b4a3928"', "at-9f8e7d6c5b4a3928"),
    # Python reprs and dicts
    ("Settings(secret_key='s3cr3t-k3y-value', debug=False)", "s3cr3t-k3y-value"),
    (
        "{'Authorization': 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIzNDU2'}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIzNDU2",
    ),
    ("headers={'authorization': 'token Tk9tQWNjZXNzVG9rZW4xMjM0NTY3'}", "Tk9tQWNjZXNzVG9rZW4xMjM0NTY3"),
    ("{'password': 'dictPa55w0rd', 'user': 'ml'}", "dictPa55w0rd"),
    ('{"api_key": "ak-0f1e2d3c4b5a69788796a5b4c3d2e1f0"}', "ak-0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    ("kwargs={'token': b'Ynl0ZXNUb2tlblZhbHVlMTIz'}", "Ynl0ZXNUb2tlblZhbHVlMTIz"),
    # HTTP headers, JWT
    ("curl -H 'Authorization: Bearer abcDEF123456ghiJKL789012'", "abcDEF123456ghiJKL789012"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZDEyMzQ=", "dXNlcjpwYXNzd29yZDEyMzQ="),
    (
        "jwt=eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJtbCJ9.U2lnbmF0dXJlVmFsdWVYWVo",
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJtbCJ9.U2lnbmF0dXJlVmFsdWVYWVo",
    ),
    # .netrc
    (
        "machine api.wandb.ai login user password 7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
        "7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
    ),
    ("  password N3trcPa55", "N3trcPa55"),
    # high-entropy values after credential words
    ("using auth secret Qm9vU3RyYXBTZWNyZXQxMjM0NTY3ODkw", "Qm9vU3RyYXBTZWNyZXQxMjM0NTY3ODkw"),
    ("token is 8f14e45fceea167a5a36dedd4bea2543", "8f14e45fceea167a5a36dedd4bea2543"),
    # Telegram, Twilio, Mailchimp, Discord
    ("bot 1234567890:AAHfn3yN8ZSN9lK3oBQjYQa1NqZ1f0wXyZ0", "1234567890:AAHfn3yN8ZSN9lK3oBQjYQa1NqZ1f0wXyZ0"),
    ("twilio SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef"),
    ("mailchimp 0123456789abcdef0123456789abcdef-us21", "0123456789abcdef0123456789abcdef-us21"),
]

# A private key cut before its END line, and a complete one.
PEM_CUT = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
)
PEM_SECRETS = (
    "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
)
PEM_FULL = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
PEM_FULL_SECRET = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
ONE_LINE_KEY = (
    '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n",'
)
ONE_LINE_KEY_SECRET = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"

ALL_SECRETS: tuple[str, ...] = tuple(s for _, s in CORPUS) + PEM_SECRETS + (PEM_FULL_SECRET, ONE_LINE_KEY_SECRET)

# Lines that must come through unchanged: ML logs are full of words like token and key.
KEEP = [
    "max_tokens=512 max_new_tokens: 128 TOKENIZERS_PARALLELISM=false",
    "tokenizer.pad_token = tokenizer.eos_token",
    "eos_token='</s>' bos_token='<s>' unk_token=[UNK] pad_token=None",
    'Missing key(s) in state_dict: "model.layers.0.weight"',
    "KeyError: 'validation'",
    "cache_key=step_100 sort_key=loss",
    'FATAL: password authentication failed for user "trainer"',
    "https://github.com/pytorch/pytorch/issues/12345",
    "commit 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
    "NCCL_IB_GID_INDEX=3 NCCL_SOCKET_IFNAME=eth0",
    "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered",
    "torch 2.4.0+cu124 nccl 2.20.5 driver 550.54.15",
]
