"""The schema before migrations: claims, diagnoses, feedback.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "traindoc_claims",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("expires_at", sa.Float, nullable=False, index=True),
    )
    op.create_table(
        "traindoc_diagnoses",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("team_id", sa.String(32), nullable=False, index=True),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=False),
        sa.Column("user", sa.String(32), nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("entry_id", sa.String(200), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False, index=True),
    )
    op.create_table(
        "traindoc_feedback",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("diagnosis_id", sa.String(32), nullable=False, index=True),
        sa.Column("team_id", sa.String(32), nullable=False),
        sa.Column("user", sa.String(32), nullable=False),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("helpful", sa.Boolean, nullable=False),
        sa.Column("predicted_id", sa.String(200), nullable=False),
        sa.Column("correct_id", sa.String(400), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False, index=True),
    )


def downgrade() -> None:
    op.drop_table("traindoc_feedback")
    op.drop_table("traindoc_diagnoses")
    op.drop_table("traindoc_claims")
