// Content blocks of an Anthropic Messages request -> chat messages (anthropic_request.h).
#pragma once
