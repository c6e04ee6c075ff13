"""The LLM task of the entity extractor: named entities of one text, copied verbatim."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bddgen.lm.tasks import PromptTask

ExtractedLabel = Literal["PERSON", "ORG", "GPE", "LOC", "FAC", "DATE", "EVENT", "WORK", "PRODUCT"]


class ExtractedEntity(BaseModel):
    text: str = Field(min_length=1, description="The entity exactly as written in the text.")
    label: ExtractedLabel


class ExtractedEntities(BaseModel):
    entities: list[ExtractedEntity] = Field(default_factory=list)


EXTRACT_ENTITIES = PromptTask(
    name="extract_entities",
    instruction="""\
List the named entities in the text. Copy each one exactly as it is written there (same spelling,
same capitals), once per distinct entity. Labels:
- PERSON: people
- ORG: organisations, clubs, companies, teams
- GPE: countries, cities, regions
- LOC: other places (rivers, mountains, areas)
- FAC: buildings, stadiums, airports, bridges
- DATE: dates, years and time intervals ("12 May 2014", "the 1990s", "from 2001 to 2004")
- EVENT: named events (tournaments, finals, wars)
- WORK: titles of books, films, songs, awards
- PRODUCT: named products, vehicles, aircraft models
Leave out everything else (numbers, generic nouns). An empty list is a valid answer.

Example text: "Anna Berg joined Northport FC in 2019 and won the 2021 Varen Cup at Ostmark Arena in Holmfirth."
Example answer: {"entities": [{"text": "Anna Berg", "label": "PERSON"}, {"text": "Northport FC", "label": "ORG"},
{"text": "2019", "label": "DATE"}, {"text": "2021 Varen Cup", "label": "EVENT"},
{"text": "Ostmark Arena", "label": "FAC"}, {"text": "Holmfirth", "label": "GPE"}]}""",
    output=ExtractedEntities,
)
